// Stage 8: the headline numbers from the totals: MFU over the time whose FLOPs are known,
// steady-state MFU, HFU, throughput, goodput, and the framework's own count beside mfu's.
#include <fmt/format.h>

#include <cmath>

#include "analysis/stages.hpp"
#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
#include "mfu/units.hpp"

namespace mfu::detail {
namespace {

/// mfu's count and the framework's more than 10% apart: said first, with the cause the inputs
/// show and which count the headline takes.
void disagreement(const Resolved& r, Analysis& a) {
  if (!a.achieved_flops_per_s_per_gpu_steady || !a.framework_flops_per_s_per_gpu) return;
  if (a.flops_source == "framework" || !(*a.framework_flops_per_s_per_gpu > 0)) return;
  const double d = *a.achieved_flops_per_s_per_gpu_steady / *a.framework_flops_per_s_per_gpu - 1;
  if (std::fabs(d) <= 0.10) return;
  a.framework_disagreement = fmt::format(
      "mfu's count ({} per GPU, {} convention) is {:+.0f}% from the {} the log "
      "prints: {}; the headline takes mfu's count, the FLOPs the model needs",
      format_flop_rate(*a.achieved_flops_per_s_per_gpu_steady), a.convention, d * 100,
      format_flop_rate(*a.framework_flops_per_s_per_gpu),
      r.framework_cause.empty() ? "a different FLOP convention or parameter count "
                                  "(the framework's is below)"
                                : r.framework_cause);
}

void framework_count(const Resolved& r, const Totals& t, Analysis& a) {
  if (t.printed_mfu_time > 0) a.framework_printed_mfu = t.printed_mfu_sum / t.printed_mfu_time;
  if (!(t.reported_time > 0)) return;
  a.framework_flops_per_s_per_gpu = t.reported_sum / t.reported_time;
  if (known(r.peak)) a.framework_mfu_steady = *a.framework_flops_per_s_per_gpu / r.peak;
  if (t.recomputed_sum > 0 && known(r.work_gpus)) {
    a.recomputed_flops_per_s_per_gpu = t.recomputed_sum / (t.reported_time * r.work_gpus);
    a.framework_agreement =
        *a.recomputed_flops_per_s_per_gpu / *a.framework_flops_per_s_per_gpu - 1.0;
    a.framework_convention = to_string(*r.framework_convention);
  }
  disagreement(r, a);
  if (a.framework_mfu_steady && *a.framework_mfu_steady > 1.0)
    a.warnings.push_back(fmt::format(
        "the framework's printed FLOP/s ({} per GPU) is {} of the {} peak: impossible, so "
        "its count is ignored",
        format_flop_rate(*a.framework_flops_per_s_per_gpu), format_percent(*a.framework_mfu_steady),
        a.gpu.empty() ? "given" : a.gpu));
}

void work_notes(const Totals& t, Analysis& a) {
  a.flops_filled = t.flops_filled;
  a.flops_left_out = t.flops_left_out;
  if (t.flops_filled > 0)
    a.warnings.push_back(fmt::format(
        "{} records print no model FLOPs: they get the FLOPs of the records with the same "
        "tokens per step (the same configuration)",
        t.flops_filled));
  if (t.flops_left_out > 0)
    a.warnings.push_back(fmt::format(
        "{} records ({} of wall time) have no model FLOPs and no configuration to take them "
        "from: they are left out of MFU's numerator and denominator",
        t.flops_left_out, format_duration(t.time_no_flops)));
  if (t.capped > 0)
    a.warnings.push_back(fmt::format(
        "{} records have less clock time than their compute at peak needs: only what fits is "
        "counted",
        t.capped));
  if (t.timers_over > 0)
    a.warnings.push_back(fmt::format(
        "{} records have timers that add up to more than the step (less its compute at peak): "
        "each timer is capped in order (idle, communication, data, optimizer, generation, other)",
        t.timers_over));
}

/// Above ~70% of a 16-bit peak no large run has been published (PaLM 46.2%, Llama 3 38-43%,
/// MegaScale 55.2%): possible, but more often a wrong input, so it is said, never refused.
void implausibly_high(Analysis& a) {
  constexpr double kPlausible = 0.70;
  const std::optional<double> m = a.mfu_steady ? a.mfu_steady : a.mfu;
  if (!m || *m <= kPlausible || *m > 1.0 + 1e-9) return;
  if (a.dtype != "bf16" && a.dtype != "fp16") return;
  a.warnings.insert(
      a.warnings.begin(),
      fmt::format("MFU {} is above 70% of the dense {} peak, more than published large runs "
                  "reach (PaLM 46.2%, Llama 3 38-43%): check whether the run computed in FP8 "
                  "(give {}), the GPU count (too low a count raises MFU by the same factor), "
                  "and whether the model FLOPs count recomputation",
                  format_percent(*m), a.dtype, input_phrase(Input::kDtype)));
}

void guard(const Analysis& a, bool timeline) {
  const char* hint =
      "check the GPU count (all GPUs of the job), the accelerator or its dense peak per GPU, and "
      "the model or the tokens per step";
  if (a.mfu && *a.mfu > 1.0 + 1e-9)
    throw ImpossibleResult(fmt::format("MFU would be {}, which is impossible; inputs: {}",
                                       format_percent(*a.mfu), inputs_list(a)),
                           hint);
  if (a.mfu_steady && *a.mfu_steady > 1.0 + 1e-9)
    throw ImpossibleResult(
        fmt::format("steady-state MFU would be {}, which is impossible; inputs: {}",
                    format_percent(*a.mfu_steady), inputs_list(a)),
        timeline ? "the log's timestamps leave less time than its step times say: check that "
                   "they come from one clock, and the GPU count, the accelerator and the model"
                 : hint);
}

}  // namespace

void fill_headline(const Resolved& r, const WorkPlan& work, const Totals& t, Analysis& a) {
  // G counts the GPUs whose work the records hold: 1 in a per-GPU analysis, where the job's
  // totals (tokens, FLOPs, GPU-hours) are unknown but every per-GPU rate is exact.
  const double P = r.peak, G = r.work_gpus;
  a.gpu_hours = known(r.gpus) ? a.wall_time_s * r.gpus / 3600.0 : 0;
  a.iterations_total = t.iterations_total;
  a.iterations_analyzed = t.iterations_steady;
  a.warmup_iterations = t.iterations_warm;
  a.warmup_time_s = t.warm_time;
  a.mfu_time_s = a.wall_time_s - t.time_no_flops;
  if (t.tokens_all > 0 && !r.per_gpu) a.total_tokens = t.tokens_all;
  if (t.flops_kept > 0 && !r.per_gpu) a.total_model_flops = t.flops_kept;
  if (t.tokens_steady > 0 && t.time_steady > 0) {
    const double rate = t.tokens_steady / t.time_steady;
    if (!r.per_gpu) a.tokens_per_s = rate;
    if (known(G)) a.tokens_per_s_per_gpu = rate / G;
  }
  const double steady_time = t.time_steady - t.time_steady_no_flops;
  if (t.flops_kept > 0 && known(G) && a.mfu_time_s > 0) {
    a.achieved_flops_per_s_per_gpu = t.flops_kept / (G * a.mfu_time_s);
    if (t.flops_steady > 0 && steady_time > 0)
      a.achieved_flops_per_s_per_gpu_steady = t.flops_steady / (G * steady_time);
  }
  framework_count(r, t, a);
  const bool can_ideal = known(P) && known(G) && work.source != WorkSource::kNone;
  if (can_ideal && a.achieved_flops_per_s_per_gpu) {
    a.mfu = *a.achieved_flops_per_s_per_gpu / P;
    if (a.achieved_flops_per_s_per_gpu_steady)
      a.mfu_steady = *a.achieved_flops_per_s_per_gpu_steady / P;
    if (r.fpt && r.recompute != Recompute::kUnspecified && work.source == WorkSource::kModel &&
        t.flops_hardware > 0)
      a.hfu = t.flops_hardware / (P * G * a.mfu_time_s);
  }
  if (a.wall_time_s > 0) a.goodput = t.productive / a.wall_time_s;
  work_notes(t, a);
  guard(a, a.clock_source == "the log's timestamps");
  implausibly_high(a);
}

}  // namespace mfu::detail

namespace mfu {

void verify_attribution(const Analysis& a) {
  double sum = 0;
  for (const auto& b : a.buckets) {
    if (b.seconds < -1e-6 * std::max(1.0, a.wall_time_s))
      throw InternalError(
          fmt::format("the bucket '{}' came out negative ({} s)", b.name, b.seconds));
    sum += b.seconds;
  }
  if (!std::isfinite(sum) || std::fabs(sum - a.wall_time_s) > 1e-9 * std::max(1.0, a.wall_time_s))
    throw InternalError(fmt::format(
        "the buckets add up to {:.9f} s, but the wall time measured from {} is {:.9f} s", sum,
        a.clock_source.empty() ? "the run" : a.clock_source, a.wall_time_s));
}

}  // namespace mfu
