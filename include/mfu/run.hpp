#pragma once
/// The normalized run every parser produces: metadata (with where each value came from),
/// per-iteration records, events and diagnostics. Records are stored column-wise in compact
/// chunks so memory grows with the iterations kept (tens of bytes each), never with the file.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace mfu {

struct TraceSummary;

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
[[nodiscard]] inline bool known(double v) {
  return !std::isnan(v);
}

/// Timers a log can carry for one iteration, in seconds (averaged per iteration).
enum class Phase : std::uint8_t {
  kForward,          ///< forward compute
  kBackward,         ///< backward compute
  kForwardBackward,  ///< forward + backward when only the sum is timed
  kOptimizer,        ///< optimizer step
  kComm,             ///< exposed communication (gradient sync, all-gather, p2p)
  kData,             ///< waiting for the next batch
  kGenerate,         ///< RLHF rollout generation (DeepSpeed-Chat)
  kOther,            ///< timed but none of the above
  kCompute,          ///< measured busy compute time, exclusive (profiler traces)
  kIdle,             ///< measured idle device time (profiler traces)
};
inline constexpr std::size_t kPhaseCount = 10;
[[nodiscard]] const char* to_string(Phase p);
/// Key used in the native format: "forward_s", "comm_s", ...
[[nodiscard]] const char* phase_key(Phase p);

/// One record of the log: one iteration, or the average of `count` iterations (Megatron prints
/// one line per log interval). Quantities are per iteration; NaN when the log does not say.
struct Iteration {
  std::int64_t step = -1;
  std::uint32_t count = 1;        ///< iterations this record stands for
  std::uint32_t line = 0;         ///< line in its file (1-based)
  std::int32_t rank = -1;         ///< rank that printed it (-1 = unknown)
  std::uint16_t file = 0;         ///< index into Run::inputs
  double time_s = kUnknown;       ///< wall time per iteration
  double timestamp_s = kUnknown;  ///< wall clock when the record was printed (Unix seconds, UTC)
  double tokens = kUnknown;       ///< tokens per iteration, all GPUs
  double samples = kUnknown;      ///< samples (sequences) per iteration, all GPUs
  double loss = kUnknown;
  double model_flops = kUnknown;  ///< model FLOPs per iteration, all GPUs, as the log says
  double reported_flops_per_gpu = kUnknown;  ///< the framework's achieved FLOP/s per GPU
  double reported_mfu = kUnknown;            ///< the framework's printed MFU, 0..1
  std::array<double, kPhaseCount> phase{kUnknown, kUnknown, kUnknown, kUnknown, kUnknown,
                                        kUnknown, kUnknown, kUnknown, kUnknown, kUnknown};

  [[nodiscard]] double& at(Phase p) { return phase[static_cast<std::size_t>(p)]; }
  [[nodiscard]] double at(Phase p) const { return phase[static_cast<std::size_t>(p)]; }
};

/// A set of an Iteration's fields: those a pass over the records reads (IterationTable::read
/// reads only their columns), or those asked about.
enum class RecordFields : std::uint32_t {
  kStep = 1u << 0,
  kCount = 1u << 1,
  kLine = 1u << 2,
  kRank = 1u << 3,
  kFile = 1u << 4,
  kTimestamp = 1u << 5,
  kTime = 1u << 6,
  kTokens = 1u << 7,
  kSamples = 1u << 8,
  kLoss = 1u << 9,
  kModelFlops = 1u << 10,
  kReportedFlops = 1u << 11,
  kReportedMfu = 1u << 12,
  kPhases = 1u << 13,  ///< every phase timer
  /// What a record's work is counted from.
  kWork = kCount | kTokens | kSamples | kModelFlops | kReportedFlops | kReportedMfu,
  kAll = (1u << 14) - 1,
};
[[nodiscard]] constexpr RecordFields operator|(RecordFields a, RecordFields b) {
  return static_cast<RecordFields>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
[[nodiscard]] constexpr RecordFields operator&(RecordFields a, RecordFields b) {
  return static_cast<RecordFields>(static_cast<std::uint32_t>(a) & static_cast<std::uint32_t>(b));
}
/// Whether `set` holds any of `fields`.
[[nodiscard]] constexpr bool any_of(RecordFields set, RecordFields fields) {
  return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(fields)) != 0;
}

/// Column-wise store of Iteration records. Columns that no record uses take no memory.
class IterationTable {
 public:
  IterationTable();
  ~IterationTable();
  IterationTable(IterationTable&&) noexcept;
  IterationTable& operator=(IterationTable&&) noexcept;
  IterationTable(const IterationTable&);
  IterationTable& operator=(const IterationTable&);

  void push_back(const Iteration& it);
  void set(std::size_t i, const Iteration& it);
  /// Record i's iteration count and step time alone (cheaper than set() in a pass that derives
  /// them).
  void set_count(std::size_t i, std::uint32_t count);
  void set_time(std::size_t i, double time_s);
  [[nodiscard]] Iteration operator[](std::size_t i) const;
  /// Records [first, first + n) into out[0..n), read a column at a time: what a pass over
  /// many records uses (several times cheaper than operator[] per record). Only the columns
  /// of `fields` are read; out's other fields keep their values.
  void read(std::size_t first, std::size_t n, Iteration* out,
            RecordFields fields = RecordFields::kAll) const;
  /// One phase timer of records [first, first + n) into out[0..n), NaN where unknown.
  void read(Phase p, std::size_t first, std::size_t n, double* out) const;
  /// The step of record i alone (cheaper than the whole record).
  [[nodiscard]] std::int64_t step(std::size_t i) const;
  /// Single fields of record i, cheaper than the whole record in a pass that needs one.
  [[nodiscard]] std::uint32_t count(std::size_t i) const;
  [[nodiscard]] std::uint32_t line(std::size_t i) const;
  [[nodiscard]] std::uint16_t file(std::size_t i) const;
  [[nodiscard]] std::int32_t rank(std::size_t i) const;
  [[nodiscard]] double timestamp(std::size_t i) const;
  [[nodiscard]] double model_flops(std::size_t i) const;
  /// Phase p's timers as exact decimals, when every piece of the table holds them so: the
  /// scale k with timer = digits / 10^k for the digits read_digits gives (-1 when no record
  /// has the timer); nullopt when some are held as doubles (read them with read()).
  [[nodiscard]] std::optional<int> decimal_scale(Phase p) const;
  /// The digits of phase p's timers of records [first, first + n) into out[0..n), `scale`
  /// being decimal_scale(p); a missing timer's are INT32_MIN. Timers compare as their digits
  /// do, and digits d give the timer d / 10^k exactly as read() does (timer_of_digits).
  void read_digits(Phase p, int scale, std::size_t first, std::size_t n, std::int32_t* out) const;
  [[nodiscard]] static double timer_of_digits(std::int32_t digits, int scale);
  /// The value every record holds in `field`, one of kTokens, kSamples and kModelFlops (NaN
  /// when none has one), when the store knows that it is one value without reading the
  /// records (each piece's column follows one constant rule); nullopt when it is not or the
  /// store cannot tell.
  [[nodiscard]] std::optional<double> uniform(RecordFields field) const;
  /// One phase timer of record i alone, and whether any record has that timer.
  [[nodiscard]] double phase(std::size_t i, Phase p) const;
  [[nodiscard]] bool has_phase(Phase p) const;
  /// Whether any record was given a value of any of `fields` other than its unknown (NaN,
  /// count 1, rank -1, ...). False means no record holds one; true, that one may (a value can
  /// be set back to unknown): a pass looking for one can skip the fields where it is false.
  [[nodiscard]] bool may_hold(RecordFields fields) const;
  /// The columns in which some record may hold a value (may_hold, column by column): the rest
  /// read as Iteration{} in every record.
  struct HeldColumns {
    RecordFields fields = static_cast<RecordFields>(0);
    std::uint32_t phases = 0;  ///< bit p: Phase p (kPhases in `fields` when any)
  };
  [[nodiscard]] HeldColumns held_columns() const;
  /// read() of the columns of `fields` that `held` (held_columns()) names, for out records
  /// that hold Iteration{}'s values in the others: what those read as in every record, so a
  /// pass over a log that fills few of the fields reads only their columns.
  void read_held(std::size_t first, std::size_t n, Iteration* out, RecordFields fields,
                 const HeldColumns& held) const;
  [[nodiscard]] Iteration back() const { return (*this)[size() - 1]; }
  void pop_back();
  /// Adds `lines` to every record's line number but the unknown ones (0): the records of a
  /// piece of a file numbered before the lines above the piece were counted.
  void shift_lines(std::uint32_t lines);
  /// Every record's file becomes `file`, and every record without a rank (-1) takes `rank`
  /// (-1 leaves them): one input's records as its part of a run of several.
  void set_source(std::uint16_t file, std::int32_t rank);
  /// Moves all records of `other` to the end of this table (`other` is left empty).
  void append(IterationTable&& other);
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] bool empty() const { return size() == 0; }
  void clear();
  /// Bytes held by the columns.
  [[nodiscard]] std::size_t memory_bytes() const;
  /// Expects about `records` more records (a hint: columns that need storage start with room
  /// for that many, up to one 2 MiB chunk each).
  void reserve(std::size_t records);
  /// Gives back the unused end of each column whose last chunk is at least three quarters
  /// empty (a table that is done growing; more records may still be added, at the cost of a
  /// copy).
  void shrink_to_fit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Records read at once by for_each_record: a block of this many is read a column at a time
/// (512 records of ~170 B stay in a core's L2 cache: a judgement, not a published figure).
inline constexpr std::size_t kRecordBlock = 512;

/// The loop of for_each_record_in: f(i, record) for every record i of [lo, hi) of `t` in
/// order, the records read a block at a time, of `fields` only: by read(), or by read_held()
/// when `held` is given. Then the block keeps Iteration{}'s values in the columns no record
/// holds from one block to the next, so f may change its copy only where every record stays
/// as read there (validated() does: Iteration{}'s values are valid).
template <class F>
void for_each_record_read(const IterationTable& t, std::size_t lo, std::size_t hi, F&& f,
                          RecordFields fields, const IterationTable::HeldColumns* held) {
  std::vector<Iteration> block(std::min(kRecordBlock, hi - lo));
  for (std::size_t first = lo; first < hi; first += kRecordBlock) {
    const std::size_t n = std::min(kRecordBlock, hi - first);
    if (held)
      t.read_held(first, n, block.data(), fields, *held);
    else
      t.read(first, n, block.data(), fields);
    for (std::size_t k = 0; k < n; ++k) f(first + k, block[k]);
  }
}

/// Calls f(i, record) for every record i of [lo, hi) of `t` in order (an f that takes an
/// Iteration& may change its copy), reading blocks of records a column at a time: a pass over
/// every record that read each one by operator[] spent most of its time there.
/// Only `fields` are read (the others are unknown). An f that takes the record as const (or by
/// value) gets it read from only the columns some record holds (read_held).
template <class F>
void for_each_record_in(const IterationTable& t, std::size_t lo, std::size_t hi, F&& f,
                        RecordFields fields = RecordFields::kAll) {
  if constexpr (std::is_invocable_v<F&, std::size_t, const Iteration&>) {
    const IterationTable::HeldColumns held = t.held_columns();
    for_each_record_read(
        t, lo, hi, [&f](std::size_t i, Iteration& it) { f(i, static_cast<const Iteration&>(it)); },
        fields, &held);
  } else {
    for_each_record_read(t, lo, hi, f, fields, nullptr);
  }
}

/// for_each_record_in over every record.
template <class F>
void for_each_record(const IterationTable& t, F&& f, RecordFields fields = RecordFields::kAll) {
  for_each_record_in(t, 0, t.size(), f, fields);
}

enum class EventKind {
  kCheckpointSave,
  kCheckpointLoad,
  kEval,
  kRestart,
  kStartup,
  kStall,
  kOther
};
[[nodiscard]] const char* to_string(EventKind k);

/// Something that happened outside the iteration records: a checkpoint, an evaluation pass, a
/// restart. `duration_s` is NaN when the log does not say how long it took.
struct Event {
  EventKind kind = EventKind::kOther;
  std::int64_t step = -1;
  double timestamp_s = kUnknown;  ///< when it ended (or was printed)
  double duration_s = kUnknown;
  std::uint32_t line = 0;
  std::uint16_t file = 0;
  std::int32_t rank = -1;  ///< rank that printed it (-1 = unknown)
  std::string detail;
  /// For kRestart: iterations whose work was thrown away (steps after the restored step).
  std::int64_t steps_lost = 0;
};

/// An event and where it stands among the records: before record `slot` of the table (the
/// table's size: after the last record).
struct SlottedEvent {
  const Event* event = nullptr;
  std::size_t slot = 0;
};

/// Where each event stands among the records: after every record of its own file printed at
/// or before it (a record on the event's own line included), or, where none was, just before
/// its file's first record in the table (lines of different files say nothing of which came
/// first: the pieces of a restarted job may be given in any order). Records printed out of
/// order keep the table's order: an event printed after them comes after all of them. An event
/// of a file without records comes after every record of the files before it.
/// Returned in the order the events are met: by slot, then by file and line. One definition
/// serves the analysis and the native copy, which writes each event at its slot, so that
/// reading the copy gives the same slots.
[[nodiscard]] std::vector<SlottedEvent> place_events(const IterationTable& t,
                                                     std::vector<const Event*> events);

/// A metadata value with where it came from ("line 123", "--gpus flag", "system.json").
struct MetaValue {
  using Value = std::variant<double, std::string>;
  Value value;
  std::string source;
  /// Set by a reader that lets a later line replace it (RunMeta::set with overwrite): a run
  /// read in parallel pieces then keeps the latest piece's value, as the streaming reader does.
  bool last_wins = false;
};

/// Run metadata as key -> value. Keys (all optional): gpus, gpu_name, dtype, tp, pp, cp, ep, dp,
/// micro_batch, global_batch, grad_accum, seq_len, layers, hidden, heads, kv_heads, head_dim,
/// ffn, vocab, experts, top_k, moe_ffn, shared_experts, swiglu, tied_embeddings, params,
/// model_name, recompute, log_interval, train_iters, save_interval, eval_interval,
/// framework, framework_peak_flops, framework_convention, virtual_pp, tokens_scope ("gpu" when
/// the records' tokens are one GPU's, from a per-GPU rate: the analysis multiplies them by the
/// GPU count, or gives MFU per GPU when the count is unknown).
class RunMeta {
 public:
  void set(const std::string& key, double value, const std::string& source, bool overwrite = true);
  void set(const std::string& key, const std::string& value, const std::string& source,
           bool overwrite = true);
  [[nodiscard]] std::optional<double> number(const std::string& key) const;
  [[nodiscard]] std::optional<std::string> text(const std::string& key) const;
  [[nodiscard]] std::string source(const std::string& key) const;
  [[nodiscard]] bool has(std::string_view key) const { return values_.find(key) != values_.end(); }
  void erase(const std::string& key) { values_.erase(key); }
  /// Keys compare with std::less<> so that a lookup by a view builds no string.
  using Map = std::map<std::string, MetaValue, std::less<>>;
  [[nodiscard]] const Map& all() const { return values_; }
  /// Copies entries of `other` that this one lacks.
  void fill_from(const RunMeta& other);
  struct Conflict {
    std::string key;
    MetaValue kept;   ///< this one's
    MetaValue other;  ///< the other's
  };
  /// Keys both hold with different values, for conflict warnings.
  [[nodiscard]] std::vector<Conflict> conflicts_with(const RunMeta& other) const;

 private:
  Map values_;
};

struct Diagnostic {
  enum class Severity { kInfo, kWarning, kError };
  Severity severity = Severity::kWarning;
  std::string file;
  std::uint64_t line = 0;
  std::string message;
};

/// How the per-iteration times were obtained, for reports.
enum class TimingKind {
  kPerIteration,  ///< every iteration is timed
  kAveraged,      ///< each record is the average of the iterations since the previous record
  kSampled,       ///< records time single iterations every N; the rest are assumed alike
  kNone,          ///< the log has no per-iteration time
};

/// One rank's records as its own stream saw them, summarised after ranks are combined per step
/// (the slowest rank sets each step's time; its timers are the step's timers).
struct RankStream {
  std::int32_t rank = -1;
  std::size_t records = 0;        ///< step records after micro-batches were grouped
  std::size_t slowest_steps = 0;  ///< combined steps whose time this rank set
  std::size_t restarts = 0;       ///< times its step counter went back (not a reordering)
  double mean_time_s = kUnknown;  ///< mean step time of its records
  double mean_data_s = kUnknown;  ///< mean data wait of its records (when timed)
  double first_timestamp_s = kUnknown;
  double last_timestamp_s = kUnknown;
};

struct Run {
  std::string format;               ///< detected (or forced) format name
  std::vector<std::string> inputs;  ///< files read, in the order used
  RunMeta meta;
  IterationTable iterations;
  std::vector<Event> events;
  std::vector<Diagnostic> diagnostics;     ///< capped; see suppressed_diagnostics
  std::size_t suppressed_diagnostics = 0;  ///< warnings beyond the cap
  std::size_t malformed_lines = 0;         ///< lines that looked like records but did not parse
  double first_timestamp_s = kUnknown;     ///< earliest wall-clock time seen in any line
  double last_timestamp_s = kUnknown;      ///< latest
  std::uint64_t lines_read = 0;
  std::uint64_t bytes_read = 0;
  TimingKind timing = TimingKind::kPerIteration;
  std::vector<std::string> fields;  ///< names of the per-iteration fields recovered
  std::vector<std::int32_t> ranks;  ///< ranks whose lines were seen
  /// The streams of the ranks that printed step records (empty when records carry no rank).
  std::vector<RankStream> rank_streams;
  bool truncated = false;  ///< the input ended early (killed job, cut stream)
  /// Index in `iterations` of the first record of each job incarnation after the first (where
  /// a restart event was derived). A native copy marks them, since the step counter alone
  /// cannot always tell a restart from lines written out of order, and the analysis starts a
  /// segment at each. Indices set before the records are combined (a merge of inputs) are
  /// kept as restarts.
  std::vector<std::size_t> restarts_at;
  /// Records gave a loss that IngestOptions::keep_loss left out of `iterations` (it still
  /// counts among the fields recovered).
  bool loss_left_out = false;
  /// Per-rank device-level detail when the run comes from profiler traces.
  std::shared_ptr<const TraceSummary> trace;
  /// Profiler traces of a few steps of the same job, given with its log: the analysis checks
  /// that they belong to it and splits the time the log leaves unattributed in their
  /// proportions. Null when none was given.
  std::shared_ptr<const TraceSummary> calibration;
  std::vector<std::string> calibration_inputs;  ///< the trace files
};

}  // namespace mfu
