#pragma once
/// `mfu analyze`: MFU of a run and where every second of its wall time went.
///
/// Definitions (DESIGN.md): MFU = total model FLOPs / (peak per GPU x GPUs x wall time).
/// The waterfall splits the wall time into buckets that add up to it exactly; each bucket says
/// whether it was measured (a timer or timestamps), inferred (slow steps, gaps, the pipeline
/// bubble formula) or residual (what is left when nothing says more).
///
/// **Example**:
///   mfu::Run run = mfu::ingest({"train.log"});
///   mfu::AnalyzeOptions opt;
///   opt.gpu = "h100"; opt.gpus = 64;
///   mfu::Analysis a = mfu::analyze(run, opt);
///   a.mfu;          // whole-run MFU, when the work and the hardware are known

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/flops.hpp"
#include "mfu/gpu.hpp"
#include "mfu/model.hpp"
#include "mfu/run.hpp"
#include "mfu/trace.hpp"

namespace mfu {

/// Flags that complete or override what the log says.
struct AnalyzeOptions {
  std::optional<ModelShape> model;  ///< --model and shape flags (fields set override the log's)
  std::optional<Convention> convention;
  std::optional<Recompute> recompute;
  std::optional<std::string> gpu;
  std::optional<double> peak_flops;  ///< per GPU
  std::optional<Dtype> dtype;
  std::optional<double> gpus;
  std::optional<double> seq_len;          ///< --seq-len (wins over the log and the preset)
  std::optional<double> tokens_per_step;  ///< global
  std::optional<double> batch;            ///< global sequences per step
  std::optional<double> flops_per_step;   ///< model FLOPs per step, all GPUs
  std::optional<std::int64_t> warmup;     ///< iterations treated as warm-up (else detected)
  std::optional<double> price_per_gpu_hour;
  /// Pipeline micro-batches per step (for the bubble); else global / (micro x dp).
  std::optional<double> micro_batches;
  /// Threads the passes over the records may use: 0 = the machine's cores (at most 8). The
  /// analysis is the same on any number.
  unsigned threads = 0;
};

/// The waterfall's buckets, in report order (DESIGN.md, "Lost time").
enum class BucketId : std::uint8_t {
  kCompute,       ///< model FLOPs at the dense peak: the ideal time
  kInefficiency,  ///< compute below peak (timed compute minus the ideal, optimizer)
  kComm,          ///< exposed communication
  kIo,            ///< waiting for data
  kIdle,          ///< pipeline bubble, host stalls, gaps between steps
  kCheckpoint,    ///< checkpoint saves
  kRestart,       ///< work redone after failures, and the downtime
  kStartup,       ///< set-up before the first step, warm-up above the steady pace
  kEval,          ///< evaluation passes
  kGeneration,    ///< RL rollout: generation, reward, reference and old log-probs, weight sync
  kOther,         ///< unattributed (residual)
};
inline constexpr std::size_t kBucketCount = 11;

/// One row of the bucket table: every renderer, whatif and the gate read names, labels,
/// advice and colours from here.
struct BucketInfo {
  BucketId id;
  const char* key;     ///< "comm": JSON keys, flags (--max-bucket comm=10%), whatif scales
  const char* label;   ///< for people: "exposed communication"
  const char* advice;  ///< what to do when the bucket is large
  const char* colour;  ///< for charts
};
[[nodiscard]] const BucketInfo& bucket_info(BucketId id);
/// The bucket whose key is `key`, or nullopt.
[[nodiscard]] std::optional<BucketId> bucket_from_key(std::string_view key);
[[nodiscard]] inline const char* bucket_key(BucketId id) {
  return bucket_info(id).key;
}

/// How a bucket's time is known.
enum class BucketSource { kMeasured, kInferred, kResidual, kNone };
[[nodiscard]] const char* to_string(BucketSource s);

struct Bucket {
  std::string name;   ///< one of kBucketNames
  std::string label;  ///< for people: "exposed communication"
  double seconds = 0;
  double fraction = 0;  ///< of the wall time
  double gpu_hours = 0;
  BucketSource source = BucketSource::kNone;
  std::string detail;          ///< what it is made of ("optimizer 14.0 ms/step measured, ...")
  double mfu_gain = 0;         ///< MFU (0..1) that removing this bucket would add
  std::optional<double> cost;  ///< with a price per GPU-hour
  std::optional<double> energy_kwh;
};

struct Distribution {
  double mean = kUnknown, median = kUnknown, p05 = kUnknown, p95 = kUnknown, min = kUnknown,
         max = kUnknown, mad = kUnknown;
  std::size_t count = 0;
};

struct Stall {
  std::int64_t step = 0;
  double time_s = 0;
  double excess_s = 0;  ///< over the steady step, times the iterations of the record
  std::uint32_t line = 0;
  std::string cause;  ///< "checkpoint", "eval" or "" when unknown
};

struct StallReport {
  double threshold_s = kUnknown;             ///< median + 3 sigma (sigma = 1.4826 MAD), at least 1%
  std::size_t count = 0;                     ///< records above the threshold
  double excess_s = 0;                       ///< their time above the steady step
  std::optional<std::int64_t> period_steps;  ///< when they recur every N steps
  std::string period_cause;                  ///< e.g. "save_interval 1000"
  std::vector<Stall> worst;                  ///< up to 10, slowest first
  std::map<std::string, double>
      excess_by_bucket;  ///< where the excess went: idle, checkpoint, eval
};

struct Fix {
  std::string bucket;
  std::string label;
  double seconds = 0;
  double mfu_gain = 0;  ///< 0..1
  std::string advice;
};

/// A value used by the analysis and where it came from ("flag --gpus", "log line 12", ...).
struct InputValue {
  std::string name;
  std::string value;
  std::string source;
};

/// One point of the per-iteration series (downsampled for charts).
struct SeriesPoint {
  std::int64_t step = 0;
  double time_s = kUnknown;
  double mfu = kUnknown;
  double tokens_per_s = kUnknown;  ///< the record's tokens over its time (all GPUs, or per GPU)
  /// The record's timed phases, seconds per iteration (NaN where untimed).
  std::array<double, kPhaseCount> phase{kUnknown, kUnknown, kUnknown, kUnknown, kUnknown,
                                        kUnknown, kUnknown, kUnknown, kUnknown, kUnknown};
  bool stall = false;
  bool warmup = false;
};

/// What the analysis made of each record (Analysis::record_flags, one byte per record).
enum RecordFlag : std::uint8_t {
  kRecordLost = 1,          ///< redone after a restart (its work was thrown away)
  kRecordWarmup = 2,        ///< before the step time settled
  kRecordStall = 4,         ///< slower than median + 3 sigma of the steady part
  kRecordSegmentStart = 8,  ///< first record after a restart (or of the run)
  kRecordOutlier = 16,      ///< impossible (faster than the peak allows, or than 1/10 the median)
  kRecordNoFlops = 32,      ///< model FLOPs unknown: out of MFU's numerator and denominator
  kRecordUntimed = 64,      ///< no valid time
};

struct Analysis {
  std::string format;
  std::vector<std::string> inputs;
  std::vector<InputValue> used;  ///< resolved inputs with their sources

  // Hardware and work.
  std::string gpu;  ///< resolved id, empty when unknown
  std::string gpu_name;
  std::string dtype;
  double peak_flops_per_gpu = kUnknown;
  double gpus = kUnknown;
  /// The log's tokens count one GPU's share (it prints a per-GPU rate) and the GPU count is
  /// unknown: MFU, FLOP/s and tokens/s are per GPU (exact: MFU does not depend on the count),
  /// while totals, tokens/s of the job and GPU-hours stay unknown.
  bool per_gpu = false;
  /// What a record's own tokens are multiplied by to count every GPU's (the GPU count when the
  /// log's tokens are per GPU, else 1).
  double record_tokens_scale = 1;
  std::optional<double> tdp_w;
  std::string convention;
  std::string recompute;
  std::string flops_source;  ///< "log", "model", "flag", "framework" or "" when unknown
  double model_flops_per_token = kUnknown;
  double hardware_flops_per_token = kUnknown;

  // Totals.
  double wall_time_s = 0;
  double gpu_hours = 0;
  std::uint64_t iterations_total = 0;
  /// The run has no timed iteration: the report gives what it can (the log's clock), but
  /// there is no MFU and no split to judge.
  bool untimed = false;
  std::uint64_t iterations_analyzed = 0;  ///< steady state
  std::uint64_t warmup_iterations = 0;
  double warmup_time_s = 0;
  double total_model_flops = kUnknown;
  double total_tokens = kUnknown;

  // Headline numbers (nullopt when the inputs do not determine them).
  std::optional<double> mfu;  ///< whole run, wall time
  std::optional<double> hfu;
  std::optional<double> mfu_steady;                    ///< steady-state steps only
  std::optional<double> achieved_flops_per_s_per_gpu;  ///< whole run
  std::optional<double> achieved_flops_per_s_per_gpu_steady;
  std::optional<double> tokens_per_s;  ///< steady state, global
  std::optional<double> tokens_per_s_per_gpu;
  std::optional<double> goodput;

  /// The framework's own count, when the log prints it.
  std::optional<double> framework_mfu_steady;
  /// The MFU the log itself prints (steady records, time-weighted), under its own peak.
  std::optional<double> framework_printed_mfu;
  /// mfu's count and the framework's more than 10% apart: by how much, the likely cause the
  /// inputs show, and which count the headline takes (reports print it under the headline).
  std::string framework_disagreement;
  std::optional<double> framework_flops_per_s_per_gpu;
  std::string framework_convention;  ///< the convention mfu believes the framework used
  std::optional<double> recomputed_flops_per_s_per_gpu;  ///< mfu's count under that convention
  std::optional<double> framework_agreement;             ///< recomputed / printed - 1

  Distribution step_time;
  Distribution mfu_per_iteration;
  std::vector<Bucket> buckets;
  StallReport stalls;
  /// The fixes worth most, largest first; never "unattributed", which is not a cause.
  std::vector<Fix> fixes;
  /// When part of the wall time is unattributed: what would attribute it for this run's
  /// framework (its timers, or a profiler trace of a few steps). Empty otherwise.
  std::string attribution_hint;
  std::vector<SeriesPoint> series;  ///< at most ~2000 points
  /// Steady-state step times (one per record, warm-up and redone work left out; at most 5000,
  /// evenly sampled): what a baseline comparison tests against.
  std::vector<double> steady_step_times_s;
  /// Per-record MFU and tokens/s per GPU of the same steady records (records where they are
  /// unknown left out): the per-step noise of the levels a baseline comparison gates on.
  std::vector<double> steady_mfu_sample;
  std::vector<double> steady_tokens_per_s_per_gpu_sample;
  /// The mean steady step split into buckets (seconds per iteration, stalls included: the same
  /// steady state as mfu_steady): what mfu whatif scales. Buckets absent are zero.
  std::map<std::string, double> steady_step_split_s;
  double steady_step_count = 0;  ///< iterations that split stands for
  std::vector<std::string>
      unknowns;  ///< what the log does not say, with the flag that would say it
  std::vector<std::string> warnings;
  /// The log's ranks contradict its GPU count (more ranks print steps than GPUs): MFU is not
  /// to be trusted; mfu check refuses to judge. Empty when they agree or the count was given.
  std::string gpu_count_conflict;
  std::optional<double> total_cost;
  std::optional<double> total_energy_kwh;
  std::size_t restarts = 0;
  std::int64_t steps_lost = 0;
  /// Per-rank device detail when the run comes from profiler traces.
  std::shared_ptr<const TraceSummary> trace;
  /// Executed FLOPs the profiler counted (with_flops=True), all GPUs, when present.
  std::optional<double> trace_executed_flops;

  [[nodiscard]] const Bucket* bucket(const std::string& name) const;
  [[nodiscard]] const Bucket* bucket(BucketId id) const;

  /// Where the wall time came from: "the log's timestamps" or "the record durations" (plus
  /// events outside records), measured apart from the waterfall, which must add up to it.
  std::string clock_source;
  /// Wall time MFU is taken over: the wall time less the records whose FLOPs are unknown.
  double mfu_time_s = 0;
  /// One RecordFlag set per record of the run, in the run's order (renderers read it).
  std::vector<std::uint8_t> record_flags;
  std::size_t outlier_records = 0;  ///< left out as impossible
  std::size_t flops_filled = 0;     ///< records whose FLOPs came from their configuration
  std::size_t flops_left_out = 0;   ///< records without FLOPs, out of MFU

  // How per-iteration work is counted, for renderers that walk the run's records.
  double seq_len = kUnknown;
  double default_tokens_per_iteration = kUnknown;
  double default_flops_per_iteration = kUnknown;
  bool flops_from_framework = false;  ///< per-record FLOPs = printed FLOP/s x time x GPUs
  bool flops_from_log = false;        ///< per-record model_flops field
};

/// Resolves hardware, model and work from the run and the flags, then computes the numbers
/// above. Throws mfu::ImpossibleResult when MFU would exceed 100% with the inputs named. A run
/// with no timed iteration gives an Analysis with `untimed` set.
[[nodiscard]] Analysis analyze(const Run& run, const AnalyzeOptions& options,
                               const GpuDatabase& db = GpuDatabase::builtin());

/// Checks that the buckets add up to the wall time measured apart from them (relative 1e-9) and
/// that none is negative; throws mfu::InternalError (a bug in mfu) when not. analyze() calls it
/// on every result.
void verify_attribution(const Analysis& a);

/// Model FLOPs of one iteration of `it` as the analysis counts them (NaN when unknown).
[[nodiscard]] double iteration_model_flops(const Analysis& a, const Iteration& it);
/// MFU of one iteration of `it` (NaN when unknown).
[[nodiscard]] double iteration_mfu(const Analysis& a, const Iteration& it);
/// Tokens of one iteration of `it` (NaN when unknown).
[[nodiscard]] double iteration_tokens(const Analysis& a, const Iteration& it);

}  // namespace mfu
