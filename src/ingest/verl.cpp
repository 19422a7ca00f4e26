// veRL's console logger (verl/utils/tracking.py, "console" backend), one line per RL step,
// usually under Ray's "(TaskRunner pid=N)" prefix:
//   "step:2 - actor/pg_loss:0.001 - perf/mfu/actor:0.343 - ... - timing_s/gen:74.020 -
//    timing_s/old_log_prob:3.566 - timing_s/ref:3.420 - timing_s/adv:1.167 -
//    timing_s/update_actor:14.302 - timing_s/step:96.551 - perf/total_num_tokens:159906 -
//    perf/throughput:3283.32"
// One record is one RL step: timing_s/step is its wall time (the trainer's step timer), the
// other timing_s/* keys are the stages inside it, one after another (ray_trainer.py). The stages
// that are not training FLOPs (rollout generation, reward, the old and reference log-probs, the
// critic's values, advantages, the weight sync) are the rollout phase; update_actor and
// update_critic are the training; testing and save_checkpoint are an evaluation and a checkpoint
// inside the step. perf/total_num_tokens is the step's batch in tokens (all GPUs), and
// perf/throughput the same over the step time and the GPU count, which gives the GPU count.
// perf/mfu/actor is veRL's own estimate for update_actor alone, not the step.
#include <fmt/format.h>

#include <cmath>

#include "ingest/common_meta.hpp"
#include "ingest/parser.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// "step:12 - key:value - ..." -> where the fields start (after the step), npos otherwise.
std::size_t fields_at(std::string_view t) {
  if (!starts_with(t, "step:")) return std::string_view::npos;
  const std::size_t dash = t.find(" - ");
  return dash == std::string_view::npos || dash > 16 ? std::string_view::npos : dash + 3;
}

/// The number after "key:" in " - "-separated fields (the key whole).
std::optional<double> field(std::string_view fields, std::string_view key) {
  for (std::size_t p = fields.find(key); p != std::string_view::npos; p = fields.find(key, p + 1)) {
    const bool starts = p == 0 || (p >= 3 && fields.substr(p - 3, 3) == " - ");
    if (!starts || p + key.size() >= fields.size() || fields[p + key.size()] != ':') continue;
    std::string_view value = fields.substr(p + key.size() + 1);
    return parse_double(trim(value.substr(0, value.find(" - "))));
  }
  return std::nullopt;
}

/// Fields of a training step (the actor's, the critic's or the step timers), not only the
/// validation's "val-core/..." metrics.
bool training_fields(std::string_view t) {
  return contains(t, "timing_s/") || contains(t, "actor/") || contains(t, "critic/");
}

// The stages of a step that are not training FLOPs (ray_trainer.py's marked_timer names).
constexpr const char* kGenerationStages[] = {"gen",    "reward", "old_log_prob",  "ref",
                                             "values", "adv",    "update_weights"};

class VerlParser : public LineParser {
 public:
  explicit VerlParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    const std::string_view t = trim(raw);
    const std::size_t at = fields_at(t);
    if (at == std::string_view::npos) {
      scanner_.scan(t, number, out_);
      return;
    }
    std::string_view s = t.substr(5);
    const auto step = take_number(s);
    if (!step || *step < 0) {
      out_.malformed(number, "cannot read the step number after 'step:'");
      return;
    }
    step_line(t.substr(at), as_step(*step), number);
  }

  void finish() override {
    scanner_.finish(out_);
    if (impossible_mfu_ > 0)
      out_.warn(first_impossible_line_,
                fmt::format("veRL printed perf/mfu/actor above 100% in {} steps (up to {:.1f}%): "
                            "impossible, the framework's estimate is wrong (its promised FLOP/s "
                            "or its FLOP count), so it is not used",
                            impossible_mfu_, 100 * max_mfu_));
  }

 private:
  void step_line(std::string_view f, std::int64_t step, std::uint64_t number) {
    // "step:0 - val-core/...": the validation before training; not a training step.
    if (!training_fields(f)) return;
    Iteration it;
    it.step = step;
    it.line = static_cast<std::uint32_t>(number);
    const auto step_s = field(f, "timing_s/step");
    if (!step_s) {
      out_.add(it);  // a training step without its timer: read, untimed
      return;
    }
    if (!(*step_s > 0)) {
      out_.malformed(
          number, fmt::format("step {}: timing_s/step is {}, not a positive time", step, *step_s));
      return;
    }
    it.time_s = *step_s;
    out_.field("time");
    stages(f, it, number);
    throughput(f, it, number);
    framework_mfu(f, number);
    out_.add(it);
  }

  void stages(std::string_view f, Iteration& it, std::uint64_t number) {
    double rollout = 0;
    bool any = false;
    for (const char* s : kGenerationStages)
      if (auto v = field(f, fmt::format("timing_s/{}", s)); v && *v > 0) {
        rollout += *v;
        any = true;
      }
    // A trainer of its own (a custom rollout loop) names its rollout stage itself.
    if (!field(f, "timing_s/gen"))
      for (const char* s : {"timing_s/get_batch_rollout_with_filtering", "timing_s/rollout",
                            "timing_s/generate_sequences"})
        if (auto v = field(f, s); v && *v > 0) {
          rollout += *v;
          any = true;
          break;
        }
    if (any) it.at(Phase::kGenerate) = rollout;
    double train = 0;
    bool trained = false;
    for (const char* s : {"timing_s/update_actor", "timing_s/update_critic"})
      if (auto v = field(f, s); v && *v > 0) {
        train += *v;
        trained = true;
      }
    if (trained) it.at(Phase::kForwardBackward) = train;
    // The stages run one after another: more than the step means some overlap (an asynchronous
    // reward, a fork's own timers); the analysis then caps them in its order, said once.
    if (rollout + train > it.time_s * 1.01 && overlapping_++ == 0)
      out_.warn(number, fmt::format("step {}: the stage timers add up to {:.1f} s, more than "
                                    "timing_s/step ({:.1f} s): some stages overlap, so the rollout "
                                    "is taken first and training gets the rest",
                                    it.step, rollout + train, it.time_s));
    // An evaluation or a save inside the step is an event of its own, and the step's record
    // keeps the rest of its time (as a framework that stops its step timer around them).
    if (auto v = field(f, "timing_s/testing"); v && *v > 0 && *v < it.time_s)
      inner_event(EventKind::kEval, *v, it, number);
    if (auto v = field(f, "timing_s/save_checkpoint"); v && *v > 0 && *v < it.time_s)
      inner_event(EventKind::kCheckpointSave, *v, it, number);
  }

  void inner_event(EventKind kind, double seconds, Iteration& it, std::uint64_t number) {
    it.time_s -= seconds;
    const std::int64_t step = it.step;
    Event e;
    e.kind = kind;
    e.step = step;
    e.duration_s = seconds;
    e.line = static_cast<std::uint32_t>(number);
    e.detail = kind == EventKind::kEval ? "timing_s/testing" : "timing_s/save_checkpoint";
    out_.add_event(e);
  }

  /// Tokens of the step, and the GPU count: throughput = tokens / (time_per_step * GPUs)
  /// (verl/trainer/ppo/metric_utils.py compute_throughout_metrics).
  void throughput(std::string_view f, Iteration& it, std::uint64_t number) {
    const auto tokens = field(f, "perf/total_num_tokens");
    if (!tokens || !(*tokens > 0)) return;
    it.tokens = *tokens;
    out_.field("tokens");
    const auto per_gpu = field(f, "perf/throughput");
    const auto step_time = field(f, "perf/time_per_step");
    if (!per_gpu || !(*per_gpu > 0)) return;
    const double gpus = *tokens / (*per_gpu * (step_time ? *step_time : it.time_s));
    if (gpus >= 0.98 && std::fabs(gpus - std::round(gpus)) <= 0.02 * gpus)
      out_.meta("gpus", std::round(gpus), number, false);
  }

  void framework_mfu(std::string_view f, std::uint64_t number) {
    auto v = field(f, "perf/mfu/actor");
    if (!v) v = field(f, "mfu/actor");  // before the perf/ prefix (early 2025)
    if (!v || !(*v > 1.0)) return;
    if (impossible_mfu_++ == 0) first_impossible_line_ = number;
    max_mfu_ = std::max(max_mfu_, *v);
  }

  RunBuilder& out_;
  CommonMetaScanner scanner_;
  std::size_t impossible_mfu_ = 0, overlapping_ = 0;
  std::uint64_t first_impossible_line_ = 0;
  double max_mfu_ = 0;
};

double sniff_verl(std::string_view head, std::string_view) {
  return score_lines(head, [](std::string_view t) {
    return fields_at(t) != std::string_view::npos && training_fields(t) ? 3.0 : 0.0;
  });
}

}  // namespace

const FormatSpec& verl_format() {
  static const FormatSpec spec{
      "verl",     "veRL RL steps 'step:N - key:value - ...' (timing_s/*, perf/*)",
      sniff_verl, make_line_parser<VerlParser>,
      nullptr,    nullptr,
      0,          TimingKind::kPerIteration};
  return spec;
}

}  // namespace mfu::detail
