// Hugging Face Trainer console output and its JSON Lines twins (ms-swift logging.jsonl):
//   {'loss': 0.0923, 'grad_norm': 2.38, 'learning_rate': 9.66e-05, 'epoch': 0.38}
//   {'train_runtime': 77351.0, 'train_samples_per_second': 3.232, ..., 'total_flos': 5.27e20}
// Sampling: one dict every `logging_steps` (500 by default) holds the losses of that step; it
// carries no step counter or time of its own. The training progress bar (tqdm:
// " 9%|▉   | 500/5490 [03:54<39:02,  2.13it/s]") gives both: a dict takes the bar's step, and
// its step time is the bar's elapsed time since the previous dict over the steps between them
// (averaged over the interval). Without a bar, the run's timing comes from train_runtime as one
// averaged record. ms-swift adds global_step/max_steps and a running train_speed(s/it).
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "ingest/common_meta.hpp"
#include "ingest/flat_dict.hpp"
#include "ingest/parser.hpp"
#include "ingest/progress_bar.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

const FlatValue* find(const std::vector<FlatValue>& d, std::string_view key) {
  for (const auto& v : d)
    if (v.key == key) return &v;
  return nullptr;
}

std::optional<double> num(const std::vector<FlatValue>& d, std::string_view key) {
  const FlatValue* v = find(d, key);
  if (v && v->number) return v->number;
  return std::nullopt;
}

/// "1m 60s", "7h 2m 17s" -> seconds.
std::optional<double> hms(std::string_view s) {
  double total = 0;
  bool any = false;
  while (!s.empty()) {
    auto n = take_number(s);
    if (!n) break;
    s = trim(s);
    double m = 1;
    if (!s.empty()) {
      if (s.front() == 'd')
        m = 86400;
      else if (s.front() == 'h')
        m = 3600;
      else if (s.front() == 'm')
        m = 60;
      s.remove_prefix(1);
    }
    total += *n * m;
    any = true;
    s = trim(s);
  }
  return any ? std::optional<double>(total) : std::nullopt;
}

class HfTrainerParser : public LineParser {
 public:
  explicit HfTrainerParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view text, std::uint64_t number) override {
    std::string_view t = trim(text);
    const std::size_t brace = t.find('{');
    if (brace == std::string_view::npos) {
      if (auto b = parse_bar(t)) return on_bar(*b);
      if (header_line(t, number)) return;
      scanner_.scan(t, number, out_);
      return;
    }
    // Logging prefixes ("[INFO:swift] ...") may precede the dict.
    std::string_view d = t.substr(brace);
    const bool looks = contains(d, "loss") || contains(d, "train_runtime") ||
                       contains(d, "eval_runtime") || contains(d, "step_time");
    if (!looks) {
      scanner_.scan(t, number, out_);
      return;
    }
    auto dict = parse_flat_dict(d);
    if (!dict) {
      out_.malformed(number, "a trainer dict line that does not parse (cut off?)");
      return;
    }
    on_dict(*dict, number);
  }

  void finish() override {
    scanner_.finish(out_);
    bool any_time = false;
    for (std::size_t i = 0; i < out_.run.iterations.size() && !any_time; ++i)
      any_time = known(out_.run.iterations[i].time_s);
    if (any_time || !known(runtime_)) return;
    // No per-step time: one record that averages the whole run (train_runtime includes the
    // evaluation passes run during training; they are subtracted when their times are known).
    // Steps counted by this parser when dicts carry no step are dict counts, not steps.
    double steps = known(total_steps_) ? total_steps_ : known(bar_total_) ? bar_total_ : kUnknown;
    if (!(steps > 0) && known(steps_per_s_)) steps = std::round(steps_per_s_ * runtime_);
    if (!(steps > 0) && !implicit_steps_) steps = max_step_;
    if (!(steps > 0)) {
      out_.warn(
          0,
          "train_runtime is printed but the number of steps is not; no step time can be derived");
      return;
    }
    double eval_total = 0;
    for (const auto& e : out_.run.events)
      if (e.kind == EventKind::kEval && known(e.duration_s)) eval_total += e.duration_s;
    Iteration agg;
    agg.step = as_step(steps);
    agg.count = static_cast<std::uint32_t>(as_count(steps, 1 << 30, 1));
    agg.line = static_cast<std::uint32_t>(runtime_line_);
    agg.time_s = std::max(0.0, runtime_ - eval_total) / steps;
    if (known(samples_per_s_)) agg.samples = samples_per_s_ * runtime_ / steps;
    if (known(total_flos_)) out_.meta("framework_total_flops", total_flos_, runtime_line_);
    agg.loss = train_loss_;
    out_.run.iterations.clear();
    out_.add(agg);
    out_.info(runtime_line_,
              fmt::format("the log has no per-step time: the run is read as one record of {} steps "
                          "averaged from train_runtime{}",
                          as_step(steps), eval_total > 0 ? " minus the evaluation time" : ""));
  }

 private:
  void on_dict(const std::vector<FlatValue>& d, std::uint64_t number) {
    if (auto rt = num(d, "train_runtime")) {
      runtime_ = *rt;
      runtime_line_ = number;
      if (auto v = num(d, "train_samples_per_second")) samples_per_s_ = *v;
      if (auto v = num(d, "train_steps_per_second")) steps_per_s_ = *v;
      if (auto v = num(d, "total_flos")) total_flos_ = *v;
      if (auto v = num(d, "train_loss")) train_loss_ = *v;
      step_from(d);
      return;
    }
    if (auto er = num(d, "eval_runtime")) {
      Event e;
      e.kind = EventKind::kEval;
      e.duration_s = *er;
      e.line = static_cast<std::uint32_t>(number);
      e.step =
          as_step(num(d, "step").value_or(max_step_ > 0 ? static_cast<double>(max_step_) : 0.0));
      e.detail = "evaluation";
      out_.add_event(std::move(e));
      return;
    }
    Iteration it;
    it.line = static_cast<std::uint32_t>(number);
    double step = step_from(d);
    const bool from_bar = !known(step) && train_bar_ != nullptr;
    if (from_bar) step = std::max(train_bar_->n, last_dict_step_ + 1);
    if (!known(step)) step = step_from_epoch(d);
    it.step = known(step) ? as_step(step) : ++implicit_step_;
    if (!known(step)) implicit_steps_ = true;
    if (from_bar) time_from_bar(it);
    if (auto v = num(d, "loss")) it.loss = *v;
    if (auto v = num(d, "step_time_ms"))
      it.time_s = *v / 1000.0;
    else if (auto v2 = num(d, "step_time"))
      it.time_s = *v2;
    else if (auto v3 = num(d, "step_time_s"))
      it.time_s = *v3;
    // ms-swift: train_speed(s/it) is elapsed / step since the start, so elapsed = speed * step.
    if (!known(it.time_s)) {
      double elapsed = kUnknown;
      if (auto v = num(d, "train_speed(s/it)"); v && known(step))
        elapsed = *v * step;
      else if (const FlatValue* e = find(d, "elapsed_time")) {
        if (auto s = hms(e->text)) elapsed = *s;
      }
      if (known(elapsed) && known(step)) {
        if (known(prev_elapsed_) && step > prev_step_ && elapsed >= prev_elapsed_) {
          it.time_s = (elapsed - prev_elapsed_) / (step - prev_step_);
        } else if (!known(prev_elapsed_) && step > 0) {
          it.time_s = elapsed / step;
        }
        prev_elapsed_ = elapsed;
        prev_step_ = step;
      }
    }
    if (known(it.time_s) && it.time_s <= 0) {
      out_.malformed(number, fmt::format("step {}: step time {} is not positive; record skipped",
                                         it.step, it.time_s));
      return;
    }
    if (auto v = num(d, "tokens_global_per_sec"); v && known(it.time_s)) it.tokens = *v * it.time_s;
    if (auto v = num(d, "max_steps")) total_steps_ = *v;
    max_step_ = std::max(max_step_, static_cast<double>(it.step));
    last_dict_step_ = static_cast<double>(it.step);
    out_.add(it);
  }

  /// Bars are told apart by their totals; the training bar is the one redrawn most (an
  /// evaluation bar lives for one pass).
  void on_bar(const BarUpdate& b) {
    Bar& bar = bars_[b.total];
    bar.n = b.n;
    bar.elapsed_s = b.elapsed_s;
    ++bar.updates;
    if (train_bar_ == nullptr || bar.updates > train_bar_->updates) {
      train_bar_ = &bar;
      bar_total_ = b.total;
    }
  }

  /// The record's step time from the training bar: elapsed time since the previous dict over
  /// the steps between them.
  void time_from_bar(Iteration& it) {
    const double steps = static_cast<double>(it.step) - bar_prev_step_;
    const double elapsed = train_bar_->elapsed_s - bar_prev_elapsed_;
    if (steps > 0 && elapsed > 0) it.time_s = elapsed / steps;
    bar_prev_step_ = static_cast<double>(it.step);
    bar_prev_elapsed_ = train_bar_->elapsed_s;
  }

  /// The "***** Running training *****" block: "Num Epochs = 3", "Total train batch size (w.
  /// parallel, distributed & accumulation) = 128", "Gradient Accumulation steps = 64", "Total
  /// optimization steps = 17,000", ... Its batch sizes give the processes: total / (per device x
  /// accumulation).
  bool header_line(std::string_view t, std::uint64_t number) {
    auto value = [&](std::string_view key) -> std::optional<double> {
      if (!starts_with(t, key)) return std::nullopt;
      return number_after(t, key, true);
    };
    if (auto v = value("Num Epochs = ")) {
      num_epochs_ = *v;
    } else if (auto v2 = value("Total optimization steps = ")) {
      total_steps_ = *v2;
      out_.meta("train_iters", *v2, number, false);
    } else if (auto v3 =
                   value("Total train batch size (w. parallel, distributed & accumulation) = ")) {
      out_.meta("global_batch", *v3, number, false);
    } else if (auto v4 = value("Instantaneous batch size per device = ")) {
      out_.meta("micro_batch", *v4, number, false);
    } else if (auto v5 = value("Gradient Accumulation steps = ")) {
      out_.meta("grad_accum", *v5, number, false);
    } else {
      return false;
    }
    const auto gb = out_.run.meta.number("global_batch");
    const auto mb = out_.run.meta.number("micro_batch");
    const auto ga = out_.run.meta.number("grad_accum");
    if (gb && mb && ga && *mb * *ga > 0) {
      const double processes = *gb / (*mb * *ga);
      if (processes >= 1 && processes == std::floor(processes))
        out_.meta("gpus", processes, number, false);
    }
    return true;
  }

  /// A dict without a step and no bar. The Trainer logs every logging_steps steps, so dict k
  /// is at step k x L; L is the round number (logging_steps) nearest the first dict's 'epoch'
  /// times the steps per epoch of the header. The epoch (printed with 2 decimals, counted in
  /// micro-batches) checks each dict: one that strays from k x L by more than an interval and
  /// the epoch's drift (missing dicts) takes the epoch's own step from there on.
  double step_from_epoch(const std::vector<FlatValue>& d) {
    const auto epoch = num(d, "epoch");
    if (!epoch || !(*epoch > 0) || !known(total_steps_) || !known(num_epochs_) ||
        !(num_epochs_ > 0))
      return kUnknown;
    const double per_epoch = total_steps_ / num_epochs_;
    const double raw = *epoch * per_epoch;
    const double rounding = std::max(0.5, per_epoch * 0.005);
    if (!known(logging_interval_)) logging_interval_ = round_interval(raw, rounding);
    if (!known(logging_interval_) || epoch_steps_astray_) return std::round(raw);
    const double expected = logging_interval_ * static_cast<double>(++epoch_dicts_);
    // The epoch counts micro-batches: it drifts from the optimizer steps by up to one step per
    // epoch (the last, partial accumulation of each), so the check widens by one per epoch.
    const double drift = *epoch;
    if (std::fabs(raw - expected) <= std::max(logging_interval_, 2 * rounding) + drift)
      return expected;
    epoch_steps_astray_ = true;
    return std::round(raw);
  }

  /// The round number (1, 2, 2.5, 5 times a power of ten) within `tolerance` of `raw`.
  static double round_interval(double raw, double tolerance) {
    for (double decade = 1; decade <= 1e6; decade *= 10)
      for (double m : {1.0, 2.0, 2.5, 5.0})
        if (std::fabs(m * decade - raw) <= tolerance && m * decade > tolerance) return m * decade;
    return kUnknown;
  }

  /// 'step', 'global_step' or ms-swift's 'global_step/max_steps': '1/294'.
  double step_from(const std::vector<FlatValue>& d) {
    if (auto v = num(d, "step")) return *v;
    if (auto v = num(d, "global_step")) return *v;
    if (const FlatValue* g = find(d, "global_step/max_steps")) {
      const auto parts = split(g->text, '/');
      if (parts.size() == 2) {
        auto a = parse_double(parts[0]);
        auto b = parse_double(parts[1]);
        if (b) total_steps_ = *b;
        if (a) return *a;
      }
    }
    return kUnknown;
  }

  RunBuilder& out_;
  CommonMetaScanner scanner_;
  std::int64_t implicit_step_ = 0;
  double max_step_ = 0;
  double total_steps_ = kUnknown;
  double num_epochs_ = kUnknown;
  double logging_interval_ = kUnknown;
  std::size_t epoch_dicts_ = 0;
  bool epoch_steps_astray_ = false;
  double runtime_ = kUnknown;
  std::uint64_t runtime_line_ = 0;
  double samples_per_s_ = kUnknown;
  double steps_per_s_ = kUnknown;
  double total_flos_ = kUnknown;
  double train_loss_ = kUnknown;
  double prev_elapsed_ = kUnknown;
  double prev_step_ = kUnknown;
  struct Bar {
    double n = 0, elapsed_s = 0;
    std::size_t updates = 0;
  };
  std::map<double, Bar> bars_;  // by total (node-stable: train_bar_ points into it)
  Bar* train_bar_ = nullptr;
  double bar_total_ = kUnknown;
  double bar_prev_step_ = 0;
  double bar_prev_elapsed_ = 0;
  double last_dict_step_ = 0;
  bool implicit_steps_ = false;
};

double sniff_hf_trainer(std::string_view head, std::string_view) {
  // One dict per line: a pretty-printed trainer_state.json is the document format instead.
  double score = 0;
  std::size_t pos = 0;
  int lines = 0;
  while (pos < head.size() && lines < 5000) {
    std::size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) nl = head.size();
    std::string_view l = head.substr(pos, nl - pos);
    pos = nl + 1;
    ++lines;
    const std::size_t open = l.find('{');
    if (open == std::string_view::npos || l.find('}', open) == std::string_view::npos) continue;
    std::string_view d = l.substr(open);
    // mfu's native lines also carry "loss" and "step"; their unit-suffixed keys tell them apart.
    if (contains(d, "\"time_s\"") || contains(d, "\"time_ms\"") || contains(d, "\"phases\"") ||
        contains(d, "\"model_flops\""))
      continue;
    // LLaMA-Factory's trainer_log.jsonl wraps the Trainer's dict with its own step and clock.
    if (contains(d, "\"current_steps\"") && contains(d, "\"elapsed_time\"")) continue;
    if ((contains(d, "'loss':") || contains(d, "\"loss\":")) &&
        (contains(d, "learning_rate") || contains(d, "epoch") || contains(d, "step"))) {
      score += 1;
    } else if (contains(d, "train_runtime") || contains(d, "eval_runtime") ||
               contains(d, "\"step_time_ms\"")) {
      score += 1;
    }
  }
  return score;
}

}  // namespace

const FormatSpec& hf_trainer_format() {
  static const FormatSpec spec{
      "hf-trainer",
      "Hugging Face Trainer dict lines ({'loss': ...}, train_runtime), ms-swift logging.jsonl",
      sniff_hf_trainer,
      make_line_parser<HfTrainerParser>,
      nullptr,
      nullptr,
      0,
      TimingKind::kAveraged};
  return spec;
}

}  // namespace mfu::detail
