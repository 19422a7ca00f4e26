// torchtune recipes' console output (meta-pytorch/torchtune, recipes/*.py):
//   the metric logger, one line every log_every_n_steps optimizer steps (StdoutLogger and
//   DiskLogger write the same text, with a space after every field):
//     "Step 10 | loss:1.0359036922454834 lr:2e-05 tokens_per_second_per_gpu:962.2259327743811 "
//   the tqdm bar, redrawn when a step ends, its description "epoch|global step|Loss: loss":
//     "1|2|Loss: 2.764298677444458:   2%|▏         | 2/101 [00:38<31:17, 18.96s/it]"
// What a record covers: the steps since the previous record, timed by the bar's elapsed clock
// (whole seconds: steps that end within the same second join the record before them). The bar
// is redrawn twice per step (update, then the new description) and restarts each epoch; a Step
// line lends its loss and tokens/s to the bar's record of the same step. The metric logger alone
// times nothing: tokens_per_second_per_gpu is tokens over time, and neither is printed apart.
#include <fmt/format.h>

#include <map>

#include "ingest/common_meta.hpp"
#include "ingest/parser.hpp"
#include "ingest/progress_bar.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// "Step 10 | loss:1.03 lr:2e-05 ..." -> the fields after " | ".
std::optional<std::string_view> step_line_fields(std::string_view t) {
  if (!starts_with(t, "Step ")) return std::nullopt;
  const std::size_t bar = t.find(" | ");
  if (bar == std::string_view::npos || bar > 20) return std::nullopt;
  std::string_view rest = t.substr(bar + 3);
  const std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos || colon == 0 || contains(rest.substr(0, colon), " "))
    return std::nullopt;
  return rest;
}

/// "loss:1.03 lr:2e-05" -> the value of `key`.
std::optional<double> step_field(std::string_view fields, std::string_view key) {
  for (auto part : split(fields, ' ')) {
    if (part.size() > key.size() && starts_with(part, key) && part[key.size()] == ':')
      return parse_double(part.substr(key.size() + 1));
  }
  return std::nullopt;
}

/// The bar's description "1|2|Loss: 2.76:" -> epoch, global step and loss.
struct Description {
  double epoch = 0, global_step = 0, loss = kUnknown;
};

std::optional<Description> bar_description(std::string_view t) {
  std::string_view s = t;
  const auto epoch = take_number(s);
  if (!epoch || !starts_with(s, "|")) return std::nullopt;
  s.remove_prefix(1);
  const auto step = take_number(s);
  if (!step || !starts_with(s, "|Loss: ")) return std::nullopt;
  s.remove_prefix(7);
  Description d{*epoch, *step, kUnknown};
  if (auto loss = take_number(s)) d.loss = *loss;
  return d;
}

/// What a Step line says about its step.
struct StepFigures {
  double loss = kUnknown, tokens_per_s_per_gpu = kUnknown;
};

class TorchtuneParser : public LineParser {
 public:
  explicit TorchtuneParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    const std::string_view t = trim(raw);
    if (auto fields = step_line_fields(t)) return step_line(t, *fields, number);
    if (auto d = bar_description(t)) return bar_line(t, *d, number);
    config_line(t, number);
    scanner_.scan(t, number, out_);
  }

  void finish() override { scanner_.finish(out_); }

 private:
  void step_line(std::string_view t, std::string_view fields, std::uint64_t number) {
    std::string_view s = t.substr(5);
    const auto step = take_number(s);
    if (!step || *step < 0) {
      out_.malformed(number, "cannot read the step number after 'Step'");
      return;
    }
    StepFigures f;
    if (auto v = step_field(fields, "loss")) f.loss = *v;
    if (auto v = step_field(fields, "tokens_per_second_per_gpu")) {
      if (!(*v > 0)) {
        out_.malformed(number, fmt::format("step {}: tokens_per_second_per_gpu is {}, not a "
                                           "positive rate",
                                           *step, *v));
        return;
      }
      f.tokens_per_s_per_gpu = *v;
    }
    const std::int64_t at = as_step(*step);
    if (bar_seen_) {
      lend(at, f);
      return;
    }
    Iteration it;
    it.step = at;
    it.line = static_cast<std::uint32_t>(number);
    it.loss = f.loss;
    if (known(it.loss)) out_.field("loss");
    out_.add(it);
  }

  /// A Step line's figures go to the bar's record of its step (looked for among the last few:
  /// buffered stdout can print Step lines after later bar redraws on stderr), or wait for it.
  void lend(std::int64_t step, const StepFigures& f) {
    auto& table = out_.run.iterations;
    for (std::size_t back = 0; back < 64 && back < table.size(); ++back) {
      const std::size_t i = table.size() - 1 - back;
      if (table.step(i) < step) break;
      if (table.step(i) != step) continue;
      Iteration it = table[i];
      apply(it, f);
      table.set(i, it);
      return;
    }
    if (pending_.size() < 4096) pending_[step] = f;
  }

  void apply(Iteration& it, const StepFigures& f) {
    if (known(f.loss)) it.loss = f.loss;
    if (known(f.loss)) out_.field("loss");
    // tokens/s per GPU = tokens / (time * world size) (the recipes' log_dict): the record
    // holds one GPU's tokens, which the analysis scales by the GPU count when it knows it.
    if (known(f.tokens_per_s_per_gpu) && known(it.time_s)) {
      it.tokens = f.tokens_per_s_per_gpu * it.time_s;
      out_.field("tokens");
      if (!out_.run.meta.has("tokens_scope")) out_.meta("tokens_scope", "gpu", it.line, false);
    }
  }

  void bar_line(std::string_view t, const Description& d, std::uint64_t number) {
    const auto b = parse_bar(t);
    if (!b) return;  // the description alone (a bar cut off)
    bar_seen_ = true;
    const bool restarted = b->total != bar_total_ || b->n < bar_n_;
    if (restarted) {
      bar_total_ = b->total;
      offset_ = last_step_;  // a new epoch's bar counts from the steps already done
      mark_n_ = 0;
      mark_elapsed_ = 0;
      bar_n_ = 0;
    }
    // The description is the previous step's on the update redraw and this step's after it.
    offset_ = std::max(offset_,
                       static_cast<std::int64_t>(d.global_step) - static_cast<std::int64_t>(b->n));
    const std::int64_t step = static_cast<std::int64_t>(b->n) + offset_;
    if (b->n <= 0) return;
    Iteration it;
    it.step = step;
    it.line = static_cast<std::uint32_t>(number);
    if (static_cast<std::int64_t>(d.global_step) == step) it.loss = d.loss;
    if (b->n == bar_n_) {
      if (mark_n_ > 0) extend_last(it, *b);  // the same step redrawn
    } else if (b->elapsed_s > mark_elapsed_) {
      start_record(it, *b);
    } else if (mark_n_ > 0) {
      extend_last(it, *b);  // ended within the same second as the record before
    } else {
      return;  // the bar's first steps within its first second: the next record covers them
    }
    last_step_ = step;
  }

  /// A new record: the steps since the previous one over the seconds since it.
  void start_record(Iteration& it, const BarUpdate& b) {
    prev_n_ = mark_n_;
    prev_elapsed_ = mark_elapsed_;
    mark_n_ = b.n;
    mark_elapsed_ = b.elapsed_s;
    bar_n_ = b.n;
    it.time_s = step_time(b);
    it.count = static_cast<std::uint32_t>(mark_n_ - prev_n_);
    out_.field("time");
    if (known(it.loss)) out_.field("loss");
    take_pending(it);
    out_.add(it);
  }

  /// The same step redrawn, or a step that ended within the same second as the record before:
  /// the last record grows to cover it.
  void extend_last(const Iteration& it, const BarUpdate& b) {
    Iteration last = out_.last();
    last.step = it.step;
    if (known(it.loss)) last.loss = it.loss;
    if (known(last.loss)) out_.field("loss");
    bar_n_ = b.n;
    mark_n_ = std::max(mark_n_, b.n);
    last.time_s = step_time(b);
    last.count = static_cast<std::uint32_t>(mark_n_ - prev_n_);
    take_pending(last);
    out_.replace_last(last);
  }

  /// The record's seconds per step. The elapsed clock has whole seconds: under 10 s a record's
  /// time would be off by up to 10% or more, and the bar's own (smoothed) rate is closer.
  [[nodiscard]] double step_time(const BarUpdate& b) const {
    const double seconds = mark_elapsed_ - prev_elapsed_;
    if (seconds < 10)
      if (auto rate = bar_seconds_per_step(b)) return *rate;
    return seconds / (mark_n_ - prev_n_);
  }

  /// The Step line of this record's step, if it came first; the ones of the steps it covers
  /// (joined into it) and before are done with.
  void take_pending(Iteration& it) {
    if (auto p = pending_.find(it.step); p != pending_.end()) apply(it, p->second);
    pending_.erase(pending_.begin(), pending_.upper_bound(it.step));
  }

  /// The recipe's name and its resolved config, printed before training.
  void config_line(std::string_view t, std::uint64_t number) {
    if (contains(t, "Running ") && contains(t, "with resolved config")) {
      if (contains(t, "SingleDevice")) out_.meta("gpus", 1.0, number, false);
      return;
    }
    if (starts_with(t, "batch_size: ")) {
      if (auto v = number_after(t, "batch_size: ")) out_.meta("micro_batch", *v, number, false);
    } else if (starts_with(t, "gradient_accumulation_steps: ")) {
      if (auto v = number_after(t, "gradient_accumulation_steps: "))
        out_.meta("grad_accum", *v, number, false);
    } else if (starts_with(t, "_component_: torchtune.models.")) {
      model_component(t.substr(30), number);
    }
  }

  /// "llama2.llama2_7b" -> the model preset "llama2_7b". Not the tokenizer, and not a LoRA or
  /// QLoRA model: frozen weights skip their weight gradients, so 6N would overstate the work.
  void model_component(std::string_view path, std::uint64_t number) {
    const std::string_view name = path.substr(path.rfind('.') + 1);
    if (name.empty() || contains(name, "tokenizer") || contains(name, "transform")) return;
    if (contains(name, "lora")) {
      out_.info(number, fmt::format("'{}' is a LoRA model: its work is not 6N per token (frozen "
                                    "weights skip their weight gradients); give the FLOPs to "
                                    "compute MFU",
                                    name));
      return;
    }
    out_.meta("model_name", std::string(name), number, false);
  }

  RunBuilder& out_;
  CommonMetaScanner scanner_;
  bool bar_seen_ = false;
  double bar_total_ = 0, bar_n_ = 0;
  double mark_n_ = 0, mark_elapsed_ = 0;  // where the current record ends
  double prev_n_ = 0, prev_elapsed_ = 0;  // where it starts
  std::int64_t offset_ = 0, last_step_ = 0;
  std::map<std::int64_t, StepFigures> pending_;
};

double sniff_torchtune(std::string_view head, std::string_view) {
  return score_lines(head, [](std::string_view t) {
    if (step_line_fields(t) && contains(t, "loss:")) return 3.0;
    return bar_description(t) && parse_bar(t) ? 3.0 : 0.0;
  });
}

}  // namespace

const FormatSpec& torchtune_format() {
  static const FormatSpec spec{"torchtune",
                               "torchtune 'Step N | loss:X lr:Y ...' metric lines and its "
                               "'epoch|step|Loss: X' progress bar",
                               sniff_torchtune,
                               make_line_parser<TorchtuneParser>,
                               nullptr,
                               nullptr,
                               0,
                               TimingKind::kAveraged};
  return spec;
}

}  // namespace mfu::detail
