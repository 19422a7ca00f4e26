// nanoGPT, llm.c and their descendants:
//   nanoGPT      "iter 10: loss 3.2202, time 893.76ms, mfu 16.68%"  (one sampled iteration)
//     Sampling: every log_interval, the time of the one iteration just run; the records stand
//     for their interval. An evaluation ("step 2000: train loss ..., val loss ...") runs inside
//     the iteration printed right after it, so that sample is not a typical iteration: its
//     excess over the previous sample is the evaluation's duration, and the record keeps the
//     typical time (else the interval would multiply the evaluation by log_interval).
//   llm.c        "step    1/19560 | train loss 11.0091 | norm 15.4446 | lr 8.57e-07 |
//                 (1234.56 ms | 34.5% bf16 MFU | 425093 tok/s)"  (one iteration per line; its
//                 ports print the same fields without the parentheses)
//   llama2.c     "510 | loss 1.2345 | lr 5.000000e-04 | 8175.64ms | mfu 0.19%"  (train.py, every
//                 log_interval: the one iteration just run, as nanoGPT; forks drop the mfu field)
//   modded-nanogpt "step:11/6200 train_loss:6.6933 train_time:214ms step_avg:nanms"
//                  (train_time is cumulative and restarts at step 10; validation is not timed)
#include <fmt/format.h>

#include "ingest/common_meta.hpp"
#include "ingest/parser.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// llama2.c train.py: "510 | loss 1.2345 | lr 5.000000e-04 | 8175.64ms | mfu 0.19%", and its
/// forks that print no MFU field, where the time ends the line ("10 | loss 9.3750 | lr
/// 3.000000e-04 | 13597.70ms", nwyin/modded-llama2).
bool llama2c_line(std::string_view t) {
  std::string_view s = t;
  const auto step = take_number(s);
  return step && starts_with(s, " | loss ") && (contains(s, "ms |") || ends_with(trim(s), "ms"));
}

/// llm.c and its ports: "step 10/74 | loss ... | 36.58 ms | ..." with a time in ms.
bool llmc_line(std::string_view t) {
  return starts_with(t, "step ") && contains(t, "| lr ") && contains(t, " ms");
}

class NanoGptParser : public LineParser {
 public:
  explicit NanoGptParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    std::string_view t = trim(raw);
    if (t.empty()) return;
    if (starts_with(t, "iter ")) {
      iter_line(t, number);
      return;
    }
    if (starts_with(t, "step:")) {
      modded_line(t, number);
      return;
    }
    if ((starts_with(t, "step ") && contains(t, "|")) || llama2c_line(t)) {
      pipe_fields_line(t, number);
      return;
    }
    if (starts_with(t, "step ") && contains(t, "val loss")) {
      // nanoGPT eval: "step 250: train loss 1.5440, val loss 1.7220"
      Event e;
      e.kind = EventKind::kEval;
      e.line = static_cast<std::uint32_t>(number);
      if (auto v = number_after(t, "step")) e.step = as_step(*v);
      e.detail = "evaluation (duration not printed)";
      out_.add_event(std::move(e));
      pending_eval_ = out_.run.events.size() - 1;
      return;
    }
    if (starts_with(t, "saving checkpoint")) {
      Event e;
      e.kind = EventKind::kCheckpointSave;
      e.line = static_cast<std::uint32_t>(number);
      e.step = out_.has_last() ? out_.last().step : 0;
      e.detail = "checkpoint save (duration not printed)";
      out_.add_event(std::move(e));
      return;
    }
    if (contains(t, "tokens per iteration will be:")) {
      if (auto v = number_after(t, "tokens per iteration will be:", true))
        out_.meta("tokens_per_step", *v, number);
      return;
    }
    if (starts_with(t, "number of parameters:")) {
      std::string_view s = t.substr(21);
      auto v = take_number(s);
      if (v) {
        s = trim(s);
        const double m = starts_with(s, "M") ? 1e6 : starts_with(s, "B") ? 1e9 : 1.0;
        out_.meta("framework_params", *v * m, number);
      }
      return;
    }
    scanner_.scan(t, number, out_);
  }

  void finish() override { scanner_.finish(out_); }

 private:
  void iter_line(std::string_view t, std::uint64_t number) {
    std::string_view s = t.substr(5);
    auto step = take_number(s);
    if (!step || *step < 0 || s.empty() || s.front() != ':') return;
    Iteration it;
    it.step = as_step(*step);
    it.line = static_cast<std::uint32_t>(number);
    if (auto v = number_after(t, "loss")) it.loss = *v;
    const std::size_t tp = t.find("time ");
    if (tp == std::string_view::npos) {
      out_.malformed(number, "nanoGPT iter line without 'time'");
      return;
    }
    std::string_view ts = t.substr(tp + 5);
    auto ms = take_number(ts);
    if (!ms || !(*ms > 0) || !std::isfinite(*ms)) {
      out_.malformed(number,
                     fmt::format("iter {}: cannot read 'time' as milliseconds > 0", it.step));
      return;
    }
    it.time_s = starts_with(trim(ts), "ms") ? *ms / 1000.0 : *ms;
    // nanoGPT prints mfu -100.00% until its running average has started.
    if (auto v = number_after(t, "mfu"); v && *v >= 0) it.reported_mfu = *v / 100.0;
    if (auto tok = out_.run.meta.number("tokens_per_step")) it.tokens = *tok;
    take_evaluation_out(it);
    out_.add(it);
  }

  /// The sampled iteration right after an evaluation of its step ran the evaluation too.
  void take_evaluation_out(Iteration& it) {
    const std::size_t k = pending_eval_;
    pending_eval_ = kNone;
    if (k == kNone || k >= out_.run.events.size() || !out_.has_last()) return;
    Event& e = out_.run.events[k];
    const double typical = out_.last().time_s;
    if (e.step != it.step || !known(typical) || !(it.time_s > typical)) return;
    e.duration_s = it.time_s - typical;
    e.detail = fmt::format(
        "evaluation (the sampled iteration {} took {:.3g} s, {:.3g} s more than "
        "the one before)",
        it.step, it.time_s, e.duration_s);
    it.time_s = typical;
  }

  /// llm.c "step 10/74 | loss 3.2 | norm 1.1 | lr 3e-04 | (36.58 ms | 9.2% bf16 MFU | 112241
  /// tok/s)" (the parentheses are optional: ports print without them) and llama2.c "510 | loss
  /// 1.2345 | lr 5e-04 | 8175.64ms | mfu 0.19%": '|'-separated fields after the step counter.
  void pipe_fields_line(std::string_view t, std::uint64_t number) {
    std::string_view s = starts_with(t, "step ") ? t.substr(5) : t;
    auto step = take_number(s);
    if (!step) return;
    s = trim(s);
    if (!s.empty() && s.front() == '/') {
      s.remove_prefix(1);
      if (auto total = take_number(s)) out_.meta("train_iters", *total, number, false);
    }
    Iteration it;
    it.step = as_step(*step);
    it.line = static_cast<std::uint32_t>(number);
    double tok_per_s = kUnknown;
    for (auto part : split(t, '|')) {
      std::string_view p = trim(part);
      while (!p.empty() && (p.front() == '(' || p.front() == ')')) p.remove_prefix(1);
      while (!p.empty() && (p.back() == '(' || p.back() == ')')) p.remove_suffix(1);
      std::string_view q = trim(p);
      if (starts_with(p, "loss ") || starts_with(p, "train loss ")) {
        q = p.substr(p.find("loss ") + 5);
        if (auto v = take_number(q)) it.loss = *v;
      } else if (starts_with(p, "mfu ")) {
        q = p.substr(4);
        if (auto v = take_number(q)) it.reported_mfu = *v / 100.0;
      } else if (contains(p, "MFU")) {
        if (auto v = take_number(q)) it.reported_mfu = *v / 100.0;
        if (contains(p, "bf16")) out_.meta("dtype", "bf16", number, false);
      } else if (contains(p, "tok/s")) {
        if (auto v = take_number(q)) tok_per_s = *v;
      } else if (ends_with(p, "ms")) {
        auto v = take_number(q);
        if (v && trim(q) == "ms") {
          if (!(*v > 0)) {
            out_.malformed(number,
                           fmt::format("step {}: step time {} ms is not positive", it.step, *v));
            return;
          }
          it.time_s = *v / 1000.0;
        }
      }
    }
    if (!known(it.time_s)) return;  // a non-timed line (llm.c's validation)
    if (known(tok_per_s)) it.tokens = tok_per_s * it.time_s;
    if (known(it.reported_mfu) && it.reported_mfu < 0) it.reported_mfu = kUnknown;  // -100%
    take_evaluation_out(it);
    out_.add(it);
  }

  void modded_line(std::string_view t, std::uint64_t number) {
    std::string_view s = t.substr(5);
    auto step = take_number(s);
    if (!step) return;
    if (!s.empty() && s.front() == '/') {
      s.remove_prefix(1);
      if (auto total = take_number(s)) out_.meta("train_iters", *total, number, false);
    }
    auto train_ms = number_after(t, "train_time:");
    if (contains(t, "val_loss:")) {
      if (train_ms && as_step(*step) >= prev_step_) {
        prev_train_s_ = *train_ms / 1000.0;
        prev_step_ = as_step(*step);
      }
      Event e;
      e.kind = EventKind::kEval;
      e.line = static_cast<std::uint32_t>(number);
      e.step = as_step(*step);
      e.detail = "validation (not counted in train_time; its duration is not printed)";
      out_.add_event(std::move(e));
      return;
    }
    if (!train_ms) {
      out_.malformed(number, "modded-nanogpt step line without train_time");
      return;
    }
    Iteration it;
    it.step = as_step(*step);
    it.line = static_cast<std::uint32_t>(number);
    if (auto v = number_after(t, "train_loss:")) it.loss = *v;
    const double now = *train_ms / 1000.0;
    if (known(prev_train_s_) && it.step == prev_step_ + 1) {
      // The timer restarts at step 10 (warm-up steps are not timed): then train_time is this
      // step alone.
      it.time_s = now >= prev_train_s_ ? now - prev_train_s_ : now;
    }
    prev_train_s_ = now;
    prev_step_ = it.step;
    if (known(it.time_s) && it.time_s <= 0) {
      out_.info(
          number,
          fmt::format("step {}: zero train_time difference (millisecond rounding); record skipped",
                      it.step));
      return;
    }
    if (auto tok = out_.run.meta.number("tokens_per_step")) it.tokens = *tok;
    out_.add(it);
  }

  RunBuilder& out_;
  CommonMetaScanner scanner_;
  double prev_train_s_ = kUnknown;
  std::int64_t prev_step_ = -10;
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t pending_eval_ = kNone;  // the evaluation event just printed
};

double sniff_nanogpt(std::string_view head, std::string_view) {
  return score_lines(head, [](std::string_view l) {
    const bool nanogpt = starts_with(l, "iter ") && contains(l, ": loss") && contains(l, "time");
    const bool modded = starts_with(l, "step:") && contains(l, "train_time:");
    const bool llmc_old = starts_with(l, "step ") && contains(l, "train loss") && contains(l, "ms");
    return nanogpt || modded || llmc_old || llmc_line(l) || llama2c_line(l) ? 1.0 : 0.0;
  });
}

}  // namespace

const FormatSpec& nanogpt_format() {
  static const FormatSpec spec{
      "nanogpt",
      "nanoGPT 'iter N: loss, time, mfu', llm.c 'step N/M | ...', modded-nanogpt",
      sniff_nanogpt,
      make_line_parser<NanoGptParser>,
      nullptr,
      nullptr,
      0,
      TimingKind::kSampled};
  return spec;
}

}  // namespace mfu::detail
