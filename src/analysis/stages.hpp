#pragma once
// The stages of mfu::analyze, each a function over plain values (DESIGN.md, "Data flow"):
//
//   resolve -> records (validation) -> work (FLOPs per record) -> steady (restarts, outliers,
//   warm-up, stalls) -> clock (the independent wall time) -> events (shared with records once)
//   -> attribute (one decomposition per record, gaps) -> headline -> advice and series
//
// Every stage reads the run and the outputs of the stages before it and returns a value; none
// of them writes to another's output.

#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "analysis/resolve.hpp"
#include "analysis/stats.hpp"
#include "analysis/waterfall.hpp"
#include "mfu/analysis.hpp"

namespace mfu::detail {

// ---- records.cpp: field validation -------------------------------------------------------

/// `it` with every field that cannot be a measurement made unknown: non-positive or
/// non-finite times, FLOPs, tokens and samples; negative or non-finite timers (a `-1` written
/// for "not measured"). `invalid` (when given) receives the names of the fields dropped.
[[nodiscard]] Iteration validated(const Iteration& it, std::vector<const char*>* invalid = nullptr);
/// validated() in place, for a record with some field to drop (valid_record() false).
void drop_invalid_fields(Iteration& it, std::vector<const char*>* invalid);

/// A field validated() keeps as it is: unknown, or finite and above zero (NaN compares false).
[[nodiscard]] inline bool keeps_positive(double v) {
  return !(v <= 0) && v != std::numeric_limits<double>::infinity();
}
/// A phase timer validated() keeps as it is: unknown, or finite and not negative.
[[nodiscard]] inline bool keeps_phase(double v) {
  return !(v < 0) && v != std::numeric_limits<double>::infinity();
}
/// Whether validated() leaves `it` as it is. Every field is tested without branching (`&=`,
/// not `&&`): each pass over the records asks this of every record, and all but a few are
/// valid (3 passes of 5.6M records spent 13% of the analysis in a call a field).
[[nodiscard]] inline bool valid_record(const Iteration& it) {
  bool ok = it.count != 0;
  for (double v : {it.time_s, it.tokens, it.samples, it.model_flops, it.reported_flops_per_gpu,
                   it.reported_mfu})
    ok &= keeps_positive(v);
  for (double v : it.phase) ok &= keeps_phase(v);
  return ok;
}

/// validated() in place.
inline void validate(Iteration& it, std::vector<const char*>* invalid = nullptr) {
  if (!valid_record(it)) drop_invalid_fields(it, invalid);
}

/// The fields validate() checks (each pass reads only the columns it needs).
inline constexpr RecordFields kValidatedFields =
    RecordFields::kTime | RecordFields::kWork | RecordFields::kPhases;

/// for_each_record_in for a pass that changes its copy of a record at most as validate() does
/// (only invalid values, to unknown): reads only the columns some record holds (read_held).
template <class F>
void for_each_held_record_in(const IterationTable& T, std::size_t lo, std::size_t hi, F&& f,
                             RecordFields fields) {
  const IterationTable::HeldColumns held = T.held_columns();
  for_each_record_read(T, lo, hi, f, fields, &held);
}

/// for_each_record_in with validated records.
template <class F>
void for_each_validated_in(const IterationTable& T, std::size_t lo, std::size_t hi, F&& f,
                           RecordFields fields = RecordFields::kAll) {
  for_each_held_record_in(
      T, lo, hi,
      [&f](std::size_t i, Iteration& it) {
        validate(it);
        f(i, static_cast<const Iteration&>(it));
      },
      fields);
}

/// for_each_record with validated records.
template <class F>
void for_each_validated(const IterationTable& T, F&& f, RecordFields fields = RecordFields::kAll) {
  for_each_validated_in(T, 0, T.size(), f, fields);
}

/// A time, count of work or rate validated() keeps: finite and above zero.
[[nodiscard]] inline bool valid_positive(double v) {
  return std::isfinite(v) && v > 0;
}
/// A phase timer validated() keeps: known, finite and not negative.
[[nodiscard]] inline bool valid_phase(double v) {
  return known(v) && std::isfinite(v) && v >= 0;
}

/// An allocator whose construction without a value leaves an element of a trivial type
/// uninitialized: a vector resized to n writes nothing, so the pages are first touched (and
/// zeroed by the kernel) by the pass that fills them, on each part's own thread.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  explicit UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    static_assert(std::is_trivially_default_constructible_v<U>);
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
/// A per-record array every element of which its pass writes (see UninitializedAllocator).
template <class T>
using PerRecord = std::vector<T, UninitializedAllocator<T>>;

/// Per-record values every later stage needs, indexed like run.iterations.
struct Records {
  PerRecord<double> time;  ///< per-iteration seconds; NaN when untimed or outlier
  /// Iterations each record covers; empty when every record covers one (no record was given
  /// a count: the usual case, whose 4 bytes a record were fresh memory to fault in).
  PerRecord<std::uint32_t> counts;
  PerRecord<std::uint8_t> flags;  ///< RecordFlag bits
  std::size_t timed = 0;          ///< records with a valid time
  /// The iterations every record covers when they all cover as many (the usual case: order
  /// statistics then select plain values), else NaN.
  double uniform_count = kUnknown;
  std::vector<std::string> warnings;  ///< invalid fields, with file:line (capped)
  unsigned threads = 1;               ///< threads a pass over the records may use

  /// The iterations record i covers.
  [[nodiscard]] std::uint32_t count(std::size_t i) const { return counts.empty() ? 1u : counts[i]; }
};

/// The inputs the analysis used with their sources, for messages: "gpus=8 (flag); ...".
[[nodiscard]] std::string inputs_list(const Analysis& a);

/// "file:line" of record i, for messages.
[[nodiscard]] std::string record_location(const Run& run, std::size_t i);

/// Reads times and counts, marks segment starts (a step going back), and reports invalid
/// fields of records and events. Later passes over the records use up to `threads` threads.
[[nodiscard]] Records read_records(const Run& run, unsigned threads = 1);

// ---- work.cpp: model FLOPs per record ----------------------------------------------------

/// How the model FLOPs of a record are known.
enum class WorkSource { kNone, kLog, kModel, kFlag, kFramework, kFrameworkTotal };

struct WorkPlan {
  WorkSource source = WorkSource::kNone;
  double fpt_model = kUnknown;     ///< model FLOPs per token (kModel)
  double fpt_hardware = kUnknown;  ///< with recomputation
  double seq_len = kUnknown;
  double tokens_default = kUnknown;
  double flops_default = kUnknown;  ///< per iteration (kFlag, kFrameworkTotal)
  double gpus = kUnknown;           ///< GPUs whose work the records count (1 when per GPU)
  double tokens_scale = 1;          ///< a record's own tokens -> all GPUs'
  /// Tokens per iteration -> model FLOPs per iteration of the records that print both: what a
  /// record missing its FLOPs gets when its tokens match (the same configuration).
  std::map<double, double> flops_by_tokens;

  [[nodiscard]] double tokens(const Iteration& it) const;
  /// Model FLOPs of one iteration of the validated record `it` with time `t` (NaN unknown);
  /// `filled` is set when they came from the record's configuration.
  [[nodiscard]] double flops(const Iteration& it, double t, bool* filled = nullptr) const;
  [[nodiscard]] const char* source_name() const;
};

/// The plan an analysis stands for, from its resolved inputs and FLOP source (without the
/// fill-in by configuration): what renderers use to count a single record.
[[nodiscard]] WorkPlan work_plan_of(const Analysis& a);

/// Chooses where model FLOPs come from; unknowns and warnings are appended to `a`, whose
/// resolved inputs (sequence length, defaults, FLOPs per token, GPUs) it starts from.
[[nodiscard]] WorkPlan plan_work(const Run& run, const Resolved& r, const Records& rec,
                                 Analysis& a);

// ---- steady.cpp: restarts, outliers, warm-up and stalls ----------------------------------

/// sigma = 1.4826 x MAD, the consistent estimator of the standard deviation for normal data
/// (Rousseeuw & Croux 1993; Leys et al. 2013 recommend median +- 3 sigma for outliers).
inline constexpr double kMadToSigma = 1.4826;
inline constexpr double kSigmas = 3.0;

struct Steady {
  double median = kUnknown;  ///< steady step time (per iteration)
  double sigma = kUnknown;   ///< 1.4826 x MAD of the steady records
  Distribution step_time;
  double stall_threshold = kUnknown;
  std::array<double, kPhaseCount> timer_median{};  ///< per iteration over steady records
  std::optional<std::int64_t> period_steps;
  std::string period_cause;
  std::size_t restarts = 0;
  std::int64_t steps_lost = 0;
  std::size_t outliers = 0;
  std::vector<std::string> warnings;
};

/// Marks lost records (restarts), impossible records (outliers: left out), warm-up, and
/// stalls in `rec.flags`. Throws ImpossibleResult when most steady records are impossible.
[[nodiscard]] Steady find_steady(const Run& run, const Resolved& r, const WorkPlan& work,
                                 const AnalyzeOptions& opt, Records& rec, const Analysis& a);

/// Warm-up of one segment of step times (NaN entries skipped): the number of leading
/// entries before the series settles within `tol` of `level`. At most half the entries.
[[nodiscard]] std::size_t settle_index(const std::vector<double>& times, double level, double tol);

// ---- clock.cpp: the independent wall time ------------------------------------------------

/// Where the clock puts each record, stored where it differs from what the record says: a
/// timed record occupies its own duration (time x count) with no gap before it, except at the
/// few records where the clock shows a gap or squeezes the record (two arrays of every
/// record's span and gap were 16 B a record: 48 MB on a 1 GiB Megatron log).
class ClockLayout {
 public:
  /// Record i's seconds on the clock, and the clock gap before it; NaN for a record that is
  /// untimed or left out.
  [[nodiscard]] double span(const Records& rec, std::size_t i) const;
  [[nodiscard]] double gap(const Records& rec, std::size_t i) const;
  void set_span(const Records& rec, std::size_t i, double seconds);
  void set_gap(const Records& rec, std::size_t i, double seconds);

 private:
  using Exceptions = std::vector<std::pair<std::size_t, double>>;  ///< sorted by record
  static double find(const Exceptions& e, std::size_t i, double fallback);
  static void put(Exceptions& e, std::size_t i, double seconds, double fallback);
  Exceptions span_, gap_;
};

struct Clock {
  bool use = false;  ///< the timeline comes from the log's timestamps
  double base = 0;   ///< Unix time of the first timed record; start and end are relative to it
  double start = kUnknown, end = kUnknown;
  double resolution = 0;  ///< 1 s when every timestamp is a whole second
  /// Per record (when `use`): the seconds it occupies and the clock gap before it. Their sum
  /// over the timed records plus `tail` is end - start exactly.
  ClockLayout layout;
  double tail = 0;  ///< after the last record
  std::string source;
  std::vector<std::string> warnings;
};

/// Checks the log's clock (daylight-saving jumps, year roll-over of year-less timestamps,
/// clocks that advance slower than the step times) and lays the records on it, or says why
/// the record durations are used instead.
[[nodiscard]] Clock plan_clock(const Run& run, const Records& rec);

// ---- events.cpp: events and records share seconds once -----------------------------------

struct PlacedEvent {
  const Event* event = nullptr;
  B bucket = B::kOther;
  double in_gap = 0;   ///< seconds in the clock gap it falls in (timeline only)
  double hosted = 0;   ///< seconds inside the excess of record `host`
  double outside = 0;  ///< seconds added outside records (no timeline)
  std::size_t host = static_cast<std::size_t>(-1);
  std::size_t before_record = 0;  ///< index of the first record after it (n: after all)
};

struct EventPlan {
  std::vector<PlacedEvent> events;  ///< by slot (place_events), restart markers left out
  /// Per record with hosted events: seconds by bucket.
  std::map<std::size_t, std::array<double, kBucketCount>> hosted;
  double outside_total = 0;
  std::vector<std::string> warnings;
};

[[nodiscard]] EventPlan plan_events(const Run& run, const Records& rec, const Steady& st,
                                    const Clock& clock);

// ---- decompose.cpp: one record --------------------------------------------------------

/// What the excess of a slow record is, when no timer explains it.
enum class ExcessKind : std::uint8_t { kNone, kWarmup, kStallIdle, kStallCheckpoint, kStallEval };

/// The parts a record's seconds are split into; each belongs to one bucket.
enum class Part : std::uint8_t {
  kIdleTimer,
  kCommTimer,
  kDataTimer,
  kOptimizerTimer,
  kGenerateTimer,
  kOtherTimer,
  kBubble,
  kCompute,
  kComputeTimedNoPeak,
  kInefficiency,
  kResidualTimed,
  kResidualUntimed,
  kResidualNoPeak,
  kWarmupExcess,
  kStallIdle,
  kStallCheckpoint,
  kStallEval,
  kLost,
};
inline constexpr std::size_t kPartCount = 18;

struct PartInfo {
  B bucket;
  BucketSource source;
  const char* what;
};
/// Each part's bucket, where its seconds come from, and what it is, in Part order (a table
/// the compiler sees: a loop over the parts of a record finds each bucket at compile time).
inline constexpr std::array<PartInfo, kPartCount> kPartInfo{{
    {B::kIdle, BucketSource::kMeasured, "idle device time (no kernel running)"},
    {B::kComm, BucketSource::kMeasured, "communication timers"},
    {B::kIo, BucketSource::kMeasured, "data-loader timers"},
    {B::kInefficiency, BucketSource::kMeasured, "optimizer step (no model FLOPs)"},
    {B::kGeneration, BucketSource::kMeasured,
     "RL rollout timers (generation, scoring; not training FLOPs)"},
    {B::kOther, BucketSource::kMeasured, "other timed work"},
    {B::kIdle, BucketSource::kInferred, "pipeline bubble (p-1)/(m+p-1)"},
    {B::kCompute, BucketSource::kInferred, "model FLOPs at peak"},
    {B::kCompute, BucketSource::kMeasured, "forward/backward timers (peak or FLOPs unknown)"},
    {B::kInefficiency, BucketSource::kMeasured, "forward/backward time above the ideal"},
    {B::kOther, BucketSource::kResidual, "step time no timer covers"},
    {B::kOther, BucketSource::kResidual,
     "rest of the step: compute below peak, exposed communication, data waits or idle (no "
     "timers in the log)"},
    {B::kOther, BucketSource::kResidual,
     "step time (FLOPs or peak unknown: compute cannot be separated)"},
    {B::kStartup, BucketSource::kInferred, "warm-up steps slower than the steady pace"},
    {B::kIdle, BucketSource::kInferred, "stalls no timer explains (steps above median + 3 sigma)"},
    {B::kCheckpoint, BucketSource::kInferred, "slow steps at checkpoint saves"},
    {B::kEval, BucketSource::kInferred, "slow steps at evaluations"},
    {B::kRestart, BucketSource::kInferred, "work redone after restarts"},
}};
[[nodiscard]] constexpr const PartInfo& part_info(Part p) {
  return kPartInfo[static_cast<std::size_t>(p)];
}

/// sum += v, left out when v is zero: the same bits either way for a sum that starts at +0, so
/// a sum over mostly zero parts skips their chained adds. x + 0 == x for every x but -0, and
/// in round-to-nearest a sum is -0 only when both of its terms are: a sum from +0 never is.
inline void add_unless_zero(double& sum, double v) {
  if (v != 0) sum += v;
}

struct RecordInput {
  double span = 0;                           ///< seconds the record occupies (whole record)
  double count = 1;                          ///< iterations
  std::array<double, kPhaseCount> timers{};  ///< per iteration, NaN unknown (validated)
  double ideal = kUnknown;                   ///< compute at peak, whole record
  double bubble_fraction = 0;                ///< (p-1)/(m+p-1), 0 without a pipeline
  double excess = 0;                         ///< seconds above the steady pace, whole record
  ExcessKind excess_kind = ExcessKind::kNone;
  const std::array<double, kPhaseCount>* timer_median = nullptr;  ///< steady, per iteration
  const std::array<double, kBucketCount>* hosted = nullptr;       ///< event seconds inside
};

struct RecordSplit {
  std::array<double, kPartCount> part{};
  std::array<double, kBucketCount> hosted{};  ///< hosted event seconds that fit, by bucket
  double ideal_kept = kUnknown;               ///< the compute at peak that fit in the span
  double timers_over = 0;       ///< timer seconds beyond the span (less the ideal): warned
  double excess_explained = 0;  ///< by timers that grew or events inside
  double excess_moved = 0;      ///< unexplained excess moved out of the residual
  std::array<double, kBucketCount> excess_by_bucket{};
};

/// Splits one record: its timers first (capped by the span less the compute at peak, never
/// rescaled), events inside it, compute at peak, compute below peak, the pipeline bubble, and
/// the residual; the excess of a slow record no timer explains moves from the residual to the
/// bucket of its kind. The parts add up to `span` exactly.
[[nodiscard]] RecordSplit decompose(const RecordInput& in);

// ---- attribute.cpp: the walk over records and gaps ---------------------------------------

/// The per-iteration MFU of the timed records, in record order: a value a record (NaN where it
/// has none) and its weight, the iterations it covers; one weight for all when every record
/// covers as many (4 B a record instead of 8: 22 MB of a 1 GiB native log's peak).
struct MfuSlots {
  PerRecord<float> value;
  PerRecord<float> weight;  ///< a slot's own; empty when every one is `uniform_weight`
  float uniform_weight = 0;
  [[nodiscard]] std::size_t size() const { return value.size(); }
  /// Slot i as distribution() takes it: a hole is {NaN, 0}.
  [[nodiscard]] WeightedF at(std::size_t i) const {
    if (std::isnan(value[i])) return {value[i], 0.0F};
    return {value[i], weight.empty() ? uniform_weight : weight[i]};
  }
  /// Slot i set to `v` for `iterations`, or to a hole when `v` is NaN.
  void set(std::size_t i, float v, float iterations) {
    value[i] = v;
    if (!weight.empty()) weight[i] = std::isnan(v) ? 0.0F : iterations;
  }
  /// Slots [first, size()) set to holes.
  void holes_from(std::size_t first) {
    for (std::size_t i = first; i < size(); ++i) set(i, std::numeric_limits<float>::quiet_NaN(), 0);
  }
};

struct Totals {
  Waterfall waterfall;
  std::array<double, kBucketCount> steady_split{};  ///< steady records, seconds
  double steady_weight = 0;                         ///< iterations of steady records
  double flops_kept = 0, flops_hardware = 0, flops_steady = 0;
  double time_steady = 0, time_no_flops = 0, time_steady_no_flops = 0;
  double tokens_all = 0, tokens_steady = 0, productive = 0;
  double reported_sum = 0, reported_time = 0, recomputed_sum = 0;
  double printed_mfu_sum = 0, printed_mfu_time = 0;  ///< the MFU the log prints, time-weighted
  std::uint64_t iterations_total = 0, iterations_steady = 0, iterations_warm = 0;
  double warm_time = 0;
  std::size_t capped = 0, flops_filled = 0, flops_left_out = 0, timers_over = 0;
  StallReport stalls;
  MfuSlots mfu_per_iteration;
};

/// The records are walked in blocks of `block_records` (kParallelBlock when 0), each on its
/// own, and the blocks' totals added in order: the same sums on any number of threads.
[[nodiscard]] Totals attribute(const Run& run, const Resolved& r, const WorkPlan& work,
                               Records& rec, const Steady& st, const Clock& clock,
                               const EventPlan& ev, std::size_t block_records = 0);

/// The wall time measured apart from the attribution: the clock span when the timeline is
/// used, else the record durations plus the event seconds outside records.
[[nodiscard]] double independent_wall_time(const Records& rec, const Clock& clock,
                                           const EventPlan& ev);

// ---- calibrate.cpp: a log with a profiler trace of a few of its steps --------------------

/// With Run::calibration: refuses a trace of another run (mfu::Error naming the difference:
/// device, world size, step numbers, step times), else splits the unattributed time (and the
/// steady split's) in the proportions the traced steps measured, marked inferred.
void calibrate_from_trace(const Run& run, const Records& rec, const Steady& st,
                          const GpuDatabase& db, Totals& t, Analysis& a);

// ---- headline.cpp and advice.cpp --------------------------------------------------------

/// Totals and headline numbers (MFU, HFU, throughput, goodput, the framework's count) into
/// `a`; throws ImpossibleResult when MFU would exceed 100%.
void fill_headline(const Resolved& r, const WorkPlan& work, const Totals& t, Analysis& a);
/// Buckets with cost and energy, the fixes worth most, the steady split for whatif.
void fill_buckets_and_fixes(const AnalyzeOptions& opt, const Totals& t, Analysis& a);
/// What would attribute the unattributed time, for the run's framework
/// (Analysis::attribution_hint).
void fill_attribution_hint(Analysis& a);
/// Stall report, series for charts, the steady step-time sample, per-record flags.
void fill_series(const Run& run, const WorkPlan& work, const Records& rec, const Steady& st,
                 Totals& t, Analysis& a);

}  // namespace mfu::detail
