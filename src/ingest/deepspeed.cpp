// DeepSpeed and frameworks built on it:
//  - engine timers: "time (ms) | forward_microstep: 193.65 | backward_microstep: 329.25 | ..."
//    (optionally after "[Rank 0] rank=0 "), "[timer.py] ... RunningAvgSamplesPerSec=..."
//  - GPT-NeoX: " samples/sec: 7.799 | iteration 34/ 10000 | elapsed time per iteration (ms): 4103.1
//    | ... | approx flops per GPU: 112.9TFLOPS | ..."
//  - DeepSpeed-Chat: "Model Parameters: 0.331 B, Latency: 0.27s, TFLOPs: 1.02, Samples/sec: 7.28,
//    Time/seq 0.14s, Batch Size: 2, Sequence Length: 512" and the RLHF breakdown
//    "|E2E latency=7.99s |Gather latency=0.00s (0.00%) |Generate time=5.26s (65.81%) |Training
//    time=2.52s (31.46%) |Others=0.22 (2.73%)|CurSamplesPerSec=8.01 |AvgSamplesPerSec=8.01"
//  - the flops profiler summary block.
//  - what the engine prints by default, every steps_per_print steps: "[Rank 0] step=10,
//    skipped=10, lr=[...]" (logging.py, with the logger's timestamp) and the throughput timer
//    "epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=265.3, CurrSamplesPerSec=
//    265.4"; alone they make one record per printed step, timed by the timestamps between them.
//  - the PipelineEngine: "steps: 30 loss: 10.7133 iter time (s): 0.283 samples/sec: 226.457",
//    its iter time the mean over the steps since the previous print, samples/sec the global
//    batch over it.
#include <fmt/format.h>

#include <cmath>

#include "ingest/common_meta.hpp"
#include "ingest/megatron_common.hpp"
#include "ingest/parser.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// "1.23 s", "12.5 ms", "3.4 us" -> seconds.
double seconds_with_unit(std::string_view v) {
  auto d = take_number(v);
  if (!d) return kUnknown;
  v = trim(v);
  if (starts_with(v, "ms")) return *d / 1e3;
  if (starts_with(v, "us")) return *d / 1e6;
  return *d;
}

/// "1.2 T", "35.42 GFLOPS", "1.2e12" -> plain number.
double si_value(std::string_view v) {
  auto d = take_number(v);
  if (!d) return kUnknown;
  v = trim(v);
  if (v.empty()) return *d;
  switch (v.front()) {
    case 'K':
    case 'k': return *d * 1e3;
    case 'M': return *d * 1e6;
    case 'G': return *d * 1e9;
    case 'T': return *d * 1e12;
    case 'P': return *d * 1e15;
    default: return *d;
  }
}

class DeepSpeedParser : public LineParser {
 public:
  explicit DeepSpeedParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    std::string_view text = raw;
    const double ts = known(out_.line_attrs().timestamp_s) ? out_.line_attrs().timestamp_s
                      : (text.size() > 20 && (text.front() == '[' || text.front() == 'I'))
                          ? find_timestamp(text)
                          : kUnknown;
    if (known(ts)) out_.timestamp(ts);
    if (in_profiler_) {
      profiler_line(text, number);
      return;
    }
    MegatronIterationLine l;
    if (parse_megatron_iteration(text, l)) {
      neox_iteration(l, number);
      return;
    }
    if (const std::size_t p = text.find("time (ms) |"); p != std::string_view::npos) {
      timer_line(text.substr(p + 11), number, ts);
      return;
    }
    if (contains(text, "Latency:") && contains(text, "TFLOPs:")) {
      chat_throughput(text, number);
      return;
    }
    if (contains(text, "E2E latency=")) {
      rlhf_breakdown(text, number);
      return;
    }
    if (starts_with(trim(text), "epoch:") && contains(text, "|step:")) {
      if (auto v = number_after(text, "|step:")) rlhf_step_ = as_step(*v);
      return;
    }
    if (contains(text, "--- DeepSpeed Flops Profiler ---")) {
      in_profiler_ = true;
      profiler_ = Iteration{};
      profiler_.line = static_cast<std::uint32_t>(number);
      return;
    }
    if (starts_with(trim(text), "steps: ") && contains(text, "iter time (s):")) {
      pipeline_line(trim(text), number);
      return;
    }
    if (const std::size_t p = text.find("] step="); p != std::string_view::npos) {
      engine_step_line(text.substr(p + 2), number);
      return;
    }
    if (contains(text,
                 "SamplesPerSec=")) {  // RunningAvg... since 2022, "0/40, SamplesPerSec=" before
      throughput_line(text);
      return;
    }
    if (contains(text, "--per_device_train_batch_size") ||
        contains(text, "--gradient_accumulation_steps")) {
      if (auto v = number_after(text, "--per_device_train_batch_size"))
        out_.meta("micro_batch", *v, number, false);
      if (auto v = number_after(text, "--gradient_accumulation_steps"))
        out_.meta("grad_accum", *v, number, false);
      if (auto v = number_after(text, "--max_seq_len")) out_.meta("seq_len", *v, number, false);
      if (const std::size_t p = text.find("--model_name_or_path"); p != std::string_view::npos) {
        std::string_view rest = trim(text.substr(p + 20));
        out_.meta("model_name", std::string(rest.substr(0, rest.find_first_of(" '\","))), number,
                  false);
      }
    }
    if (const std::size_t p = text.find("train_batch_size");
        p != std::string_view::npos && (p == 0 || text[p - 1] == '"' || text[p - 1] == ' ') &&
        !contains(text, "per_device")) {
      std::string_view rest = text.substr(p + 16);
      while (!rest.empty() && (rest.front() == '"' || rest.front() == ':' || rest.front() == ' ' ||
                               rest.front() == '.'))
        rest.remove_prefix(1);
      if (auto v = take_number(rest); v && *v > 0) out_.meta("global_batch", *v, number, false);
    }
    scanner_.scan(text, number, out_);
  }

  void finish() override {
    if (in_profiler_) finish_profiler();
    scanner_.finish(out_);
    if (skipped_ > 0)
      out_.warn(skipped_line_,
                fmt::format("{} of the first {} optimizer steps were skipped (loss-scale "
                            "overflow, 'skipped={}'): their compute updated nothing; a lower "
                            "initial loss scale (or bf16) avoids them",
                            skipped_, skipped_at_, skipped_));
  }

 private:
  /// A record from a richer line than the engine's "step=" lines: those made so far were
  /// stand-ins (timed by timestamps alone) and give way.
  void add_rich(const Iteration& it) {
    drop_stand_ins();
    rich_ = true;
    timer_record_open_ = false;
    out_.add(it);
  }

  void drop_stand_ins() {
    if (plain_records_ > 0 && plain_records_ == out_.run.iterations.size())
      for (; plain_records_ > 0; --plain_records_) out_.run.iterations.pop_back();
  }

  /// "step=10, skipped=10, lr=[...]": the step counter, the skipped steps, and, in a log that
  /// prints nothing richer, a record timed by the timestamps.
  void engine_step_line(std::string_view t, std::uint64_t number) {
    const auto step = number_after(t, "step=");
    if (!step || *step < 0) return;
    engine_step_ = as_step(*step);
    if (auto k = number_after(t, "skipped="); k && *k >= 0) {
      skipped_ = static_cast<std::int64_t>(*k);
      skipped_at_ = engine_step_;
      if (skipped_ > 0 && skipped_line_ == 0) skipped_line_ = number;
    }
    if (rich_ || timer_record_open_ || engine_step_ <= 0) return;
    if (out_.has_last() && out_.last().step >= engine_step_) return;
    Iteration it;
    it.step = engine_step_;
    it.line = static_cast<std::uint32_t>(number);
    out_.add(it);
    ++plain_records_;
  }

  /// "epoch=0/micro_step=34/global_step=34, RunningAvgSamplesPerSec=..., CurrSamplesPerSec=..."
  /// (or "0/40, SamplesPerSec=..." before 2022, the average since the start): CurrSamplesPerSec
  /// is the global batch over the last step's time.
  void throughput_line(std::string_view text) {
    if (auto v = number_after(text, "global_step=")) engine_step_ = as_step(*v);
    if (auto v = number_after(text, "CurrSamplesPerSec=")) curr_samples_per_s_ = *v;
    const auto gb = out_.run.meta.number("global_batch");
    if (plain_records_ == 0 || !gb || !out_.has_last() || out_.last().step != engine_step_) return;
    Iteration it = out_.last();
    it.samples = *gb;
    if (!known(it.timestamp_s) && known(curr_samples_per_s_) && curr_samples_per_s_ > 0)
      it.time_s = *gb / curr_samples_per_s_;  // no timestamps: the last step's rate
    out_.replace_last(it);
  }

  /// PipelineEngine: "steps: 30 loss: 10.7133 iter time (s): 0.283 samples/sec: 226.457". A
  /// wall-clock timer line just before it sums its timers over the same steps.
  void pipeline_line(std::string_view t, std::uint64_t number) {
    const auto step = number_after(t, "steps:");
    const auto iter_s = number_after(t, "iter time (s):");
    if (!step || *step < 0 || !iter_s || !(*iter_s > 0)) {
      out_.malformed(number, "a PipelineEngine 'steps:' line without its step or iter time");
      return;
    }
    Iteration it;
    it.step = as_step(*step);
    it.line = static_cast<std::uint32_t>(number);
    it.time_s = *iter_s;
    if (auto v = number_after(t, "loss:")) it.loss = *v;
    if (auto v = number_after(t, "samples/sec:"); v && *v > 0) {
      const double gb = *v * *iter_s;  // train_batch_size / iter time, 3 decimals each
      if (std::fabs(gb - std::round(gb)) <= 0.02 * gb) {
        it.samples = std::round(gb);
        out_.meta("global_batch", it.samples, number, false);
      }
    }
    last_engine_record_ = false;
    if (!timer_record_open_ && out_.has_last() && out_.last().step == it.step) {
      // Megatron-DeepSpeed's iteration line for this step came first and says more.
      Iteration same = out_.last();
      if (!known(same.loss)) same.loss = it.loss;
      out_.replace_last(same);
      return;
    }
    if (timer_record_open_ && out_.has_last()) timers_per_step(out_.last(), it, number);
    const bool replace = timer_record_open_ && out_.has_last();
    if (replace) {
      rich_ = true;
      timer_record_open_ = false;
      out_.replace_last(it);
    } else {
      add_rich(it);
    }
    last_pipeline_step_ = it.step;
  }

  /// The timers of the interval's timer line, as means per step when the interval is known
  /// (the steps since the previous PipelineEngine line); else they are left out, said once.
  void timers_per_step(const Iteration& summed, Iteration& it, std::uint64_t number) {
    const std::int64_t steps = last_pipeline_step_ >= 0 ? it.step - last_pipeline_step_ : 0;
    if (steps <= 0) {
      if (!warned_interval_)
        out_.info(number,
                  "the engine's timer line sums its timers over the steps since the "
                  "previous print (steps_per_print), and that count is not known here: "
                  "the timers are left out of this step");
      warned_interval_ = true;
      return;
    }
    for (std::size_t p = 0; p < kPhaseCount; ++p)
      if (known(summed.phase[p])) it.phase[p] = summed.phase[p] / static_cast<double>(steps);
  }

  void neox_iteration(const MegatronIterationLine& l, std::uint64_t number) {
    if (!known(l.time_s) || l.time_s <= 0) {
      out_.malformed(number,
                     fmt::format("iteration {}: cannot read the elapsed time", l.iteration));
      return;
    }
    Iteration it = maker_.make(l, number);
    if (l.reporter) out_.meta("framework_flops_by", l.reporter, number, false);
    if (known(l.samples_per_s) && !known(it.samples)) it.samples = l.samples_per_s * l.time_s;
    add_rich(it);
    timers_for_ = out_.run.iterations.size();
  }

  void timer_line(std::string_view rest, std::uint64_t number, double ts) {
    TimerSet timers;
    bool micro = false;
    for (auto seg : split(rest, '|')) {
      const std::size_t colon = seg.rfind(':');
      if (colon == std::string_view::npos) continue;
      std::string_view v = seg.substr(colon + 1);
      auto d = take_number(v);
      if (!d) continue;
      std::string_view name = trim(seg.substr(0, colon));
      micro = micro || contains(name, "microstep");
      timers.add(name, *d / 1000.0);
    }
    if (timers.empty()) return;
    // GPT-NeoX prints its timer line after the iteration line it belongs to.
    if (timers_for_ != 0 && timers_for_ == out_.run.iterations.size()) {
      Iteration it = out_.last();
      timers.apply(it);
      out_.replace_last(it);
      timers_for_ = 0;
      return;
    }
    if (!micro && last_engine_record_ && out_.has_last() && out_.last().step == engine_step_) {
      // The global-step line repeats the micro-step line's values: keep the first.
      return;
    }
    // Engine wall-clock breakdown: one record per printed step; step time = forward + backward
    // + step, as the flops profiler's "iter latency" defines it. The "step=" stand-ins go first,
    // so that the step is numbered against the richer records only.
    drop_stand_ins();
    Iteration it;
    it.line = static_cast<std::uint32_t>(number);
    it.timestamp_s = ts;
    it.step = engine_step_ >= 0 ? engine_step_ : ++implicit_step_;
    if (engine_step_ >= 0 && out_.has_last() && out_.last().step >= engine_step_)
      it.step = out_.last().step + 1;
    timers.apply(it);
    double total = 0;
    for (Phase p : {Phase::kForward, Phase::kBackward, Phase::kComm, Phase::kOptimizer}) {
      if (known(it.at(p))) total += it.at(p);
    }
    if (total <= 0) return;
    it.time_s = total;
    const auto gb = out_.run.meta.number("global_batch");
    if (known(curr_samples_per_s_) && gb) it.samples = *gb;
    add_rich(it);
    last_engine_record_ = true;
    timer_record_open_ = true;  // a PipelineEngine line may follow and take it over
  }

  void chat_throughput(std::string_view text, std::uint64_t number) {
    Iteration it;
    it.line = static_cast<std::uint32_t>(number);
    it.step = ++implicit_step_;
    auto lat = number_after(text, "Latency:");
    if (!lat || *lat <= 0) {
      out_.malformed(number, "cannot read 'Latency:' as seconds > 0");
      return;
    }
    it.time_s = *lat;
    if (auto v = number_after(text, "TFLOPs:")) {
      it.reported_flops_per_gpu = *v * 1e12;
      out_.meta("framework_flops_by", "deepspeed-chat", number, false);
    }
    if (auto v = number_after(text, "Batch Size:")) out_.meta("micro_batch", *v, number, false);
    if (auto v = number_after(text, "Sequence Length:")) out_.meta("seq_len", *v, number, false);
    if (auto v = number_after(text, "Model Parameters:"))
      out_.meta("framework_params", *v * 1e9, number, false);
    const auto gpus = out_.run.meta.number("gpus");
    const auto mb = out_.run.meta.number("micro_batch");
    if (gpus && mb) it.samples = *gpus * *mb;
    add_rich(it);
  }

  void rlhf_breakdown(std::string_view text, std::uint64_t number) {
    Iteration it;
    it.line = static_cast<std::uint32_t>(number);
    it.step = rlhf_step_ >= 0 ? rlhf_step_ : ++implicit_step_;
    if (out_.has_last() && it.step <= out_.last().step && rlhf_step_ < 0)
      it.step = out_.last().step + 1;
    auto e2e = number_after(text, "E2E latency=");
    if (!e2e || *e2e <= 0) {
      out_.malformed(number, "cannot read 'E2E latency=' as seconds > 0");
      return;
    }
    it.time_s = *e2e;
    if (auto v = number_after(text, "Generate time=")) it.at(Phase::kGenerate) = *v;
    if (auto v = number_after(text, "Training time=")) it.at(Phase::kForwardBackward) = *v;
    double other = 0;
    if (auto v = number_after(text, "Others=")) other += *v;
    if (auto v = number_after(text, "Gather latency=")) other += *v;
    it.at(Phase::kOther) = other;
    add_rich(it);
    rlhf_step_ = -1;
  }

  void profiler_line(std::string_view text, std::uint64_t number) {
    std::string_view t = trim(text);
    if (t.empty()) return;
    if (starts_with(t, "----") && profiler_started_) {
      finish_profiler();
      return;
    }
    if (contains(t, "Profile Summary at step")) {
      if (auto v = number_after(t, "step")) profiler_.step = as_step(*v);
      profiler_started_ = true;
      return;
    }
    const std::size_t colon = t.find(':');
    if (colon == std::string_view::npos) return;
    const std::string key(trim(t.substr(0, colon)));
    const std::string_view v = trim(t.substr(colon + 1));
    profiler_started_ = true;
    if (key == "world size")
      out_.meta("gpus", si_value(v), number);
    else if (key == "data parallel size")
      out_.meta("dp", si_value(v), number);
    else if (key == "model parallel size")
      out_.meta("tp", si_value(v), number);
    else if (key == "batch size per GPU")
      out_.meta("micro_batch", si_value(v), number);
    else if (key == "params per GPU")
      out_.meta("params_per_gpu", si_value(v), number);
    else if (key == "iter latency")
      profiler_.time_s = seconds_with_unit(v);
    else if (key == "FLOPS per GPU")
      profiler_.reported_flops_per_gpu = si_value(v);
    else if (key == "fwd latency")
      profiler_.at(Phase::kForward) = seconds_with_unit(v);
    else if (key == "bwd latency")
      profiler_.at(Phase::kBackward) = seconds_with_unit(v);
    else if (key == "step latency")
      profiler_.at(Phase::kOptimizer) = seconds_with_unit(v);
  }

  void finish_profiler() {
    in_profiler_ = false;
    profiler_started_ = false;
    if (!known(profiler_.time_s)) {
      out_.info(profiler_.line,
                "DeepSpeed flops profiler block without 'iter latency': only its header was read");
      return;
    }
    if (profiler_.step < 0) profiler_.step = ++implicit_step_;
    add_rich(profiler_);
  }

  RunBuilder& out_;
  CommonMetaScanner scanner_;
  MegatronRecordMaker maker_;
  std::size_t timers_for_ = 0;
  std::int64_t engine_step_ = -1;
  std::int64_t implicit_step_ = 0;
  std::int64_t rlhf_step_ = -1;
  double curr_samples_per_s_ = kUnknown;
  bool last_engine_record_ = false;
  bool rich_ = false;               // a record richer than a "step=" stand-in was made
  bool timer_record_open_ = false;  // the last record is a timer line's, not yet claimed
  bool warned_interval_ = false;
  std::size_t plain_records_ = 0;  // "step=" stand-ins at the start of the table
  std::int64_t last_pipeline_step_ = -1;
  std::int64_t skipped_ = 0, skipped_at_ = 0;
  std::uint64_t skipped_line_ = 0;
  bool in_profiler_ = false;
  bool profiler_started_ = false;
  Iteration profiler_;
};

double sniff_deepspeed(std::string_view head, std::string_view) {
  double strong = 0, weak = 0;
  auto count = [&](std::string_view sig, double w, double& into) {
    std::size_t pos = 0;
    int n = 0;
    while ((pos = head.find(sig, pos)) != std::string_view::npos && n < 200) {
      ++n;
      pos += sig.size();
    }
    into += n * w;
  };
  count("_microstep:", 2, strong);
  count("E2E latency=", 2, strong);
  count("--- DeepSpeed Flops Profiler ---", 5, strong);
  // GPT-NeoX iteration lines ("samples/sec: 7.799 | iteration 34/ 10000 | ..."), not the
  // PipelineEngine's "samples/sec:" that Megatron-DeepSpeed prints beside its own lines.
  for (std::size_t p = head.find("samples/sec: "); p != std::string_view::npos;
       p = head.find("samples/sec: ", p + 13)) {
    const std::size_t end = head.find('\n', p);
    if (contains(head.substr(p, std::min<std::size_t>(end - p, 40)), "| iteration")) strong += 1;
  }
  count("approx flops per GPU", 1, strong);
  std::size_t pos = 0;
  while ((pos = head.find("Latency:", pos)) != std::string_view::npos) {
    const std::size_t end = head.find('\n', pos);
    if (contains(head.substr(pos, end - pos), "TFLOPs:")) strong += 2;
    pos += 8;
  }
  count("SamplesPerSec=", 0.3, weak);
  count(", skipped=", 0.5, strong);      // the engine's "[Rank 0] step=N, skipped=K, lr=[...]"
  count(" iter time (s): ", 1, strong);  // PipelineEngine (half a Megatron-DeepSpeed line)
  count("[deepspeed]", 0.3, weak);
  count("deepspeed.launcher", 0.5, weak);
  count("DeepSpeed", 0.05, weak);
  return strong + weak;
}

}  // namespace

const FormatSpec& deepspeed_format() {
  static const FormatSpec spec{
      "deepspeed",
      "DeepSpeed engine timers, GPT-NeoX, DeepSpeed-Chat throughput and RLHF lines, flops profiler",
      sniff_deepspeed,
      make_line_parser<DeepSpeedParser>,
      nullptr,
      nullptr,
      0,
      TimingKind::kPerIteration};
  return spec;
}

}  // namespace mfu::detail
