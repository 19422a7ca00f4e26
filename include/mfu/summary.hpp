#pragma once
/// Job summaries that merge exactly: what a fleet report adds up (`mfu analyze --output
/// summary`, `mfu merge`).
///
/// A summary holds only additive quantities and what identifies the job: GPU time per bucket,
/// model FLOPs, tokens, the peak FLOPs the GPUs offered over the wall time, steps, restarts,
/// the same GPU time by accelerator, model and framework, the first start and last end, and
/// the inputs. Every additive quantity is an integer (GPU time in nanoseconds, FLOPs and tokens
/// whole), rounded once when the job is summarised, so merging is exact: associative and
/// commutative to the last digit, whichever order and grouping a distributed engine uses.
///
/// **Example**:
///   mfu::JobSummary a = mfu::summarize_job(analysis, run);
///   mfu::JobSummary fleet = mfu::merge_summaries(a, b);
///   fleet.mfu();   // model FLOPs / peak FLOPs offered, over every job

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/analysis.hpp"

namespace mfu {

/// An exact non-negative integer of up to 38 digits (GPU-nanoseconds of a fleet, FLOPs).
__extension__ typedef unsigned __int128 ExactCount;

struct JobSummary {
  std::uint64_t jobs = 0;
  std::map<std::string, ExactCount> bucket_gpu_ns;  ///< bucket key -> GPU time (GPU x ns)
  ExactCount gpu_ns = 0;                            ///< all GPU time: the buckets' sum
  ExactCount model_flops = 0;
  ExactCount tokens = 0;
  ExactCount peak_flops = 0;  ///< peak FLOP/s per GPU x GPUs x wall time, of jobs with MFU
  ExactCount mfu_gpu_ns = 0;  ///< the GPU time of the jobs whose MFU is known
  std::uint64_t steps = 0;
  std::uint64_t restarts = 0;
  std::map<std::string, ExactCount> gpu_ns_by_gpu;        ///< accelerator id ("unknown")
  std::map<std::string, ExactCount> gpu_ns_by_model;      ///< model name ("unknown")
  std::map<std::string, ExactCount> gpu_ns_by_framework;  ///< the log's format
  /// Any other grouping ("team" -> "vision" -> GPU time), from a job table or a path pattern.
  std::map<std::string, std::map<std::string, ExactCount>> gpu_ns_by;
  double start_s = kUnknown;  ///< earliest log timestamp (Unix seconds), NaN when none
  double end_s = kUnknown;
  std::vector<std::string> inputs;  ///< sorted

  /// GPU-time-weighted MFU of the jobs whose MFU is known (0..1); NaN when none is.
  [[nodiscard]] double mfu() const;
  [[nodiscard]] double gpu_hours() const;
};

/// One job's summary from its analysis (and the run, for the model's name and the log's
/// clock). A job whose GPU count is unknown has no GPU time: throws mfu::Error saying so (a
/// fleet report cannot weigh it).
[[nodiscard]] JobSummary summarize_job(const Analysis& analysis, const Run& run);

/// The exact sum of two summaries.
[[nodiscard]] JobSummary merge_summaries(const JobSummary& a, const JobSummary& b);

/// One JSON line (no newline): integers as decimal strings, since JSON readers lose digits
/// past 2^53.
[[nodiscard]] std::string summary_json(const JobSummary& s);

/// Reads a line written by summary_json. Throws mfu::Error naming `origin` when it is not one.
[[nodiscard]] JobSummary parse_summary(std::string_view line, const std::string& origin);

/// Decimal digits of an exact count.
[[nodiscard]] std::string to_decimal(ExactCount v);

}  // namespace mfu
