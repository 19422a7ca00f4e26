// The record store: a list of segments of columns (src/record_column.hpp), addressed as one
// sequence of records.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "decimal_column.hpp"
#include "mfu/error.hpp"
#include "mfu/run.hpp"
#include "narrow_column.hpp"
#include "record_column.hpp"

namespace mfu {
namespace {

using detail::Column;
using detail::DecimalColumn;
using detail::NarrowColumn;

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();

/// One piece of the table: the records a parser wrote, as columns. A table is a list of them:
/// the pieces of a file read in parallel stay pieces (appending one to another copied every
/// value and faulted in a second set of chunks).
struct Segment {
  std::size_t n = 0;
  // Steps and ranks of ranks printing into one file (1, 1, 2, 2, ...; 0, 1, 0, 1, ...) follow no
  // rule: they take 2-byte offsets instead of 8 and 4 bytes.
  NarrowColumn<std::int64_t> step{-1};
  Column<std::uint32_t> count{1};
  Column<std::uint32_t> line{0};
  NarrowColumn<std::int32_t> rank{-1};
  Column<std::uint16_t> file{0};
  DecimalColumn timestamp;  // whole seconds fit an int32 until 2038
  // Times, work and the framework's FLOP/s keep double precision: MFU and every bucket derive
  // from them, and a float's 7 digits would show as noise (1.248e15 -> 1.24800002e15 FLOPs).
  // Phase timers too: each bucket is checked to the microsecond over the whole run. Times and
  // timers printed with a few decimals are held as exact decimals (4 bytes) while they are.
  // Loss and the printed MFU are kept as float: 7 significant digits is below the resolution
  // any log prints them with, and halves their memory.
  DecimalColumn time;
  Column<double> tokens{kUnknown};
  Column<double> samples{kUnknown};
  Column<float> loss{kNaNf};
  // FLOPs as a native log prints them, 7 significant digits ("2.500439e+16"), are digits too.
  DecimalColumn model_flops{DecimalColumn::kLeastScale};
  DecimalColumn reported_flops{0, 1e12};  // most parsers read TFLOP/s and multiply by 10^12
  Column<float> reported_mfu{kNaNf};
  std::array<DecimalColumn, kPhaseCount> phase;

  /// Writes v at i, except that a column no record has used yet stays unallocated. Inlined, so
  /// that a field a log never gives costs a compare, not a call: as a call, its prologue was
  /// paid for the four phase timers a Megatron line lacks (BM_MegatronLines 0.764 ms as a call,
  /// 0.650 ms inlined: one core, medians of 5 runs alternating with the same base build, which
  /// took 0.681 and 0.675 ms; 2026-12-07).
  template <class C, class V>
  [[gnu::always_inline]] static void store(C& c, std::size_t i, V v, V fill) {
    bool is_fill = false;
    if constexpr (std::is_floating_point_v<V>) {
      is_fill = std::isnan(v) ? std::isnan(fill) : v == fill;
    } else {
      is_fill = v == fill;
    }
    if (is_fill && !c.active()) return;
    c.put(i, static_cast<typename C::value_type>(v));
  }

  void write(std::size_t i, const Iteration& it) {
    step.put(i, it.step);
    line.put(i, it.line);
    store(count, i, it.count, std::uint32_t{1});
    store(rank, i, it.rank, std::int32_t{-1});
    store(file, i, it.file, std::uint16_t{0});
    store(timestamp, i, it.timestamp_s, kUnknown);
    store(time, i, it.time_s, kUnknown);
    store(tokens, i, it.tokens, kUnknown);
    store(samples, i, it.samples, kUnknown);
    store(loss, i, it.loss, kUnknown);
    store(model_flops, i, it.model_flops, kUnknown);
    store(reported_flops, i, it.reported_flops_per_gpu, kUnknown);
    store(reported_mfu, i, it.reported_mfu, kUnknown);
    for (std::size_t p = 0; p < kPhaseCount; ++p) store(phase[p], i, it.phase[p], kUnknown);
  }

  Iteration read(std::size_t i) const {
    Iteration it;
    read_block(i, 1, &it, RecordFields::kAll);
    return it;
  }

  /// The columns of `fields` (of the phase timers, those of the bits of `phases`), records
  /// [first, first + m), into out[0..m).
  void read_block(std::size_t first, std::size_t m, Iteration* out, RecordFields fields,
                  std::uint32_t phases = ~0u) const {
    const auto wanted = [fields](RecordFields f) { return any_of(fields, f); };
    if (wanted(RecordFields::kCount))
      count.read(first, m, [out](std::size_t k, std::uint32_t v) { out[k].count = v; });
    if (wanted(RecordFields::kTokens))
      tokens.read(first, m, [out](std::size_t k, double v) { out[k].tokens = v; });
    if (wanted(RecordFields::kSamples))
      samples.read(first, m, [out](std::size_t k, double v) { out[k].samples = v; });
    if (wanted(RecordFields::kModelFlops))
      model_flops.read(first, m, [out](std::size_t k, double v) { out[k].model_flops = v; });
    if (wanted(RecordFields::kReportedFlops))
      reported_flops.read(first, m,
                          [out](std::size_t k, double v) { out[k].reported_flops_per_gpu = v; });
    if (wanted(RecordFields::kReportedMfu))
      reported_mfu.read(first, m, [out](std::size_t k, float v) { out[k].reported_mfu = v; });
    if (wanted(RecordFields::kStep))
      step.read(first, m, [out](std::size_t k, std::int64_t v) { out[k].step = v; });
    if (wanted(RecordFields::kLine))
      line.read(first, m, [out](std::size_t k, std::uint32_t v) { out[k].line = v; });
    if (wanted(RecordFields::kRank))
      rank.read(first, m, [out](std::size_t k, std::int32_t v) { out[k].rank = v; });
    if (wanted(RecordFields::kFile))
      file.read(first, m, [out](std::size_t k, std::uint16_t v) { out[k].file = v; });
    if (wanted(RecordFields::kTimestamp))
      timestamp.read(first, m, [out](std::size_t k, double v) { out[k].timestamp_s = v; });
    if (wanted(RecordFields::kTime))
      time.read(first, m, [out](std::size_t k, double v) { out[k].time_s = v; });
    if (wanted(RecordFields::kLoss))
      loss.read(first, m, [out](std::size_t k, float v) { out[k].loss = v; });
    if (!wanted(RecordFields::kPhases)) return;
    for (std::size_t p = 0; p < kPhaseCount; ++p)
      if ((phases >> p) & 1u)
        phase[p].read(first, m, [out, p](std::size_t k, double v) { out[k].phase[p] = v; });
  }

  /// Adds the columns that hold a value to `held`.
  void add_held(IterationTable::HeldColumns& held) const {
    auto& f = held.fields;
    const auto add_if = [&f](bool active, RecordFields field) {
      if (active) f = f | field;
    };
    add_if(step.active(), RecordFields::kStep);
    add_if(count.active(), RecordFields::kCount);
    add_if(line.active(), RecordFields::kLine);
    add_if(rank.active(), RecordFields::kRank);
    add_if(file.active(), RecordFields::kFile);
    add_if(timestamp.active(), RecordFields::kTimestamp);
    add_if(time.active(), RecordFields::kTime);
    add_if(tokens.active(), RecordFields::kTokens);
    add_if(samples.active(), RecordFields::kSamples);
    add_if(loss.active(), RecordFields::kLoss);
    add_if(model_flops.active(), RecordFields::kModelFlops);
    add_if(reported_flops.active(), RecordFields::kReportedFlops);
    add_if(reported_mfu.active(), RecordFields::kReportedMfu);
    for (std::size_t p = 0; p < kPhaseCount; ++p)
      if (phase[p].active()) {
        held.phases |= 1u << p;
        f = f | RecordFields::kPhases;
      }
  }

  void reserve(std::size_t records) {
    step.reserve(records);
    count.reserve(records);
    line.reserve(records);
    rank.reserve(records);
    file.reserve(records);
    timestamp.reserve(records);
    time.reserve(records);
    tokens.reserve(records);
    samples.reserve(records);
    loss.reserve(records);
    model_flops.reserve(records);
    reported_flops.reserve(records);
    reported_mfu.reserve(records);
    for (auto& p : phase) p.reserve(records);
  }

  void shrink_to_fit() {
    step.shrink_to_fit();
    count.shrink_to_fit();
    line.shrink_to_fit();
    rank.shrink_to_fit();
    file.shrink_to_fit();
    timestamp.shrink_to_fit();
    time.shrink_to_fit();
    tokens.shrink_to_fit();
    samples.shrink_to_fit();
    loss.shrink_to_fit();
    model_flops.shrink_to_fit();
    reported_flops.shrink_to_fit();
    reported_mfu.shrink_to_fit();
    for (auto& p : phase) p.shrink_to_fit();
  }

  std::size_t bytes() const {
    std::size_t b = step.bytes() + count.bytes() + line.bytes() + rank.bytes() + file.bytes() +
                    timestamp.bytes() + time.bytes() + tokens.bytes() + samples.bytes() +
                    loss.bytes() + model_flops.bytes() + reported_flops.bytes() +
                    reported_mfu.bytes();
    for (const auto& p : phase) b += p.bytes();
    return b;
  }
};

}  // namespace

// Its own cache lines: the pieces of a file are parsed on their own threads into tables whose
// Impl the main thread allocated one after another, and `n` is written on every record. Sharing a
// line made each push_back wait for the line to come back from the other core: 10-20% of the
// samples of `mfu analyze` on the 1 GiB native file (perf). 128 bytes: a line pair, which the
// adjacent-line prefetcher of x86-64 moves together.
struct alignas(128) IterationTable::Impl {
  std::vector<Segment> segments;    // none while the table is empty
  std::vector<std::size_t> starts;  // the first record of each segment
  std::size_t n = 0;
  std::size_t reserved = 0;  // reserve()'s hint, for a segment not yet made

  /// The segment holding record i (< n) and i's index in it.
  [[nodiscard]] std::pair<std::size_t, std::size_t> locate(std::size_t i) const {
    if (segments.size() == 1) return {0, i};
    const auto it = std::upper_bound(starts.begin(), starts.end(), i);
    const auto k = static_cast<std::size_t>(it - starts.begin()) - 1;
    return {k, i - starts[k]};
  }
  /// The segment of record i and i's index in it; past the last record, a segment whose
  /// columns give their fill values (what an empty column gives).
  [[nodiscard]] const Segment& at(std::size_t i, std::size_t& local) const {
    static const Segment kEmpty;
    if (i >= n) {
      local = 0;
      return kEmpty;
    }
    const auto [k, l] = locate(i);
    local = l;
    return segments[k];
  }
  /// get(segment, index in it) for record i.
  template <class Get>
  auto field(std::size_t i, Get&& get) const {
    std::size_t l = 0;
    const Segment& s = at(i, l);
    return get(s, l);
  }
  /// Calls f(segment, local first, count, offset into the caller's block) for the parts of
  /// records [first, first + m) in each segment.
  template <class F>
  void for_range(std::size_t first, std::size_t m, F&& f) const {
    if (m == 0) return;
    auto [k, local] = locate(first);
    for (std::size_t done = 0; done < m; ++k, local = 0) {
      const std::size_t take = std::min(m - done, segments[k].n - local);
      f(segments[k], local, take, done);
      done += take;
    }
  }
};

std::int64_t IterationTable::step(std::size_t i) const {
  return impl_->field(i, [](const Segment& s, std::size_t l) { return s.step.get(l); });
}
std::uint32_t IterationTable::count(std::size_t i) const {
  return impl_->field(i, [](const Segment& s, std::size_t l) { return s.count.get(l); });
}
std::uint32_t IterationTable::line(std::size_t i) const {
  return impl_->field(i, [](const Segment& s, std::size_t l) { return s.line.get(l); });
}
std::int32_t IterationTable::rank(std::size_t i) const {
  return impl_->field(i, [](const Segment& s, std::size_t l) { return s.rank.get(l); });
}
std::uint16_t IterationTable::file(std::size_t i) const {
  return impl_->field(i, [](const Segment& s, std::size_t l) { return s.file.get(l); });
}
double IterationTable::timestamp(std::size_t i) const {
  return impl_->field(i, [](const Segment& s, std::size_t l) { return s.timestamp.get(l); });
}
double IterationTable::model_flops(std::size_t i) const {
  return impl_->field(i, [](const Segment& s, std::size_t l) { return s.model_flops.get(l); });
}
double IterationTable::phase(std::size_t i, Phase p) const {
  return impl_->field(i, [p](const Segment& s, std::size_t l) {
    return s.phase[static_cast<std::size_t>(p)].get(l);
  });
}

bool IterationTable::has_phase(Phase p) const {
  return std::any_of(impl_->segments.begin(), impl_->segments.end(), [p](const Segment& s) {
    return s.phase[static_cast<std::size_t>(p)].active();
  });
}

std::optional<double> IterationTable::uniform(RecordFields field) const {
  const auto uniform_in = [field](const Segment& s) -> std::optional<double> {
    switch (field) {
      case RecordFields::kTokens: return s.tokens.uniform(s.n);
      case RecordFields::kSamples: return s.samples.uniform(s.n);
      case RecordFields::kModelFlops: return s.model_flops.uniform(s.n);
      default: throw InternalError("IterationTable::uniform of a field it does not hold");
    }
  };
  std::optional<double> all;
  for (const Segment& s : impl_->segments) {
    if (s.n == 0) continue;
    const std::optional<double> v = uniform_in(s);
    if (!v || (all && !detail::same_value(*all, *v))) return std::nullopt;
    all = v;
  }
  return all;
}

bool IterationTable::may_hold(RecordFields fields) const {
  return any_of(held_columns().fields, fields);
}

IterationTable::IterationTable() : impl_(std::make_unique<Impl>()) {}
IterationTable::~IterationTable() = default;
IterationTable::IterationTable(IterationTable&&) noexcept = default;
IterationTable& IterationTable::operator=(IterationTable&&) noexcept = default;
IterationTable::IterationTable(const IterationTable& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
IterationTable& IterationTable::operator=(const IterationTable& o) {
  if (this != &o) impl_ = std::make_unique<Impl>(*o.impl_);
  return *this;
}

void IterationTable::push_back(const Iteration& it) {
  if (impl_->segments.empty()) {
    impl_->segments.emplace_back().reserve(impl_->reserved);
    impl_->starts.push_back(0);
  }
  Segment& last = impl_->segments.back();
  last.write(last.n, it);
  ++last.n;
  ++impl_->n;
}

void IterationTable::set(std::size_t i, const Iteration& it) {
  if (i >= impl_->n) return;
  const auto [k, l] = impl_->locate(i);
  impl_->segments[k].write(l, it);
}

void IterationTable::set_count(std::size_t i, std::uint32_t count) {
  if (i >= impl_->n) return;
  const auto [k, l] = impl_->locate(i);
  Segment::store(impl_->segments[k].count, l, count, std::uint32_t{1});
}

void IterationTable::set_time(std::size_t i, double time_s) {
  if (i >= impl_->n) return;
  const auto [k, l] = impl_->locate(i);
  Segment::store(impl_->segments[k].time, l, time_s, kUnknown);
}

Iteration IterationTable::operator[](std::size_t i) const {
  return impl_->field(i, [](const Segment& s, std::size_t l) { return s.read(l); });
}

void IterationTable::read(std::size_t first, std::size_t n, Iteration* out,
                          RecordFields fields) const {
  if (first > impl_->n || n > impl_->n - first)
    throw InternalError("IterationTable::read past the last record");
  impl_->for_range(first, n, [&](const Segment& s, std::size_t l, std::size_t m, std::size_t at) {
    s.read_block(l, m, out + at, fields);
  });
}

IterationTable::HeldColumns IterationTable::held_columns() const {
  HeldColumns held;
  for (const Segment& s : impl_->segments) s.add_held(held);
  return held;
}

void IterationTable::read_held(std::size_t first, std::size_t n, Iteration* out,
                               RecordFields fields, const HeldColumns& held) const {
  if (first > impl_->n || n > impl_->n - first)
    throw InternalError("IterationTable::read past the last record");
  const RecordFields read = fields & held.fields;
  impl_->for_range(first, n, [&](const Segment& s, std::size_t l, std::size_t m, std::size_t at) {
    s.read_block(l, m, out + at, read, held.phases);
  });
}

void IterationTable::read(Phase p, std::size_t first, std::size_t n, double* out) const {
  if (first > impl_->n || n > impl_->n - first)
    throw InternalError("IterationTable::read past the last record");
  impl_->for_range(first, n, [&](const Segment& s, std::size_t l, std::size_t m, std::size_t at) {
    s.phase[static_cast<std::size_t>(p)].read(
        l, m, [o = out + at](std::size_t k, double v) { o[k] = v; });
  });
}

std::optional<int> IterationTable::decimal_scale(Phase p) const {
  int scale = -1;
  for (const Segment& s : impl_->segments) {
    const std::optional<int> k = s.phase[static_cast<std::size_t>(p)].scale();
    if (!k) return std::nullopt;
    if (*k < 0) continue;  // no timer in this piece: any scale
    if (scale >= 0 && *k != scale) return std::nullopt;
    scale = *k;
  }
  return scale;
}

void IterationTable::read_digits(Phase p, int scale, std::size_t first, std::size_t n,
                                 std::int32_t* out) const {
  if (first > impl_->n || n > impl_->n - first)
    throw InternalError("IterationTable::read_digits past the last record");
  impl_->for_range(first, n, [&](const Segment& s, std::size_t l, std::size_t m, std::size_t at) {
    const DecimalColumn& c = s.phase[static_cast<std::size_t>(p)];
    const std::optional<int> k = c.scale();
    if (!k || (*k >= 0 && *k != scale))
      throw InternalError("IterationTable::read_digits at another scale than the column's");
    c.read_digits(l, m, [o = out + at](std::size_t j, std::int32_t d) { o[j] = d; });
  });
}

double IterationTable::timer_of_digits(std::int32_t digits, int scale) {
  return DecimalColumn::from_digits(digits, scale);
}

void IterationTable::pop_back() {
  if (impl_->n == 0) return;
  Segment& last = impl_->segments.back();
  last.write(last.n - 1, Iteration{});
  --last.n;
  --impl_->n;
  if (last.n == 0) {
    impl_->segments.pop_back();
    impl_->starts.pop_back();
  }
}

std::size_t IterationTable::size() const {
  return impl_->n;
}

void IterationTable::append(IterationTable&& other) {
  if (this == &other || other.impl_->n == 0) return;
  for (Segment& s : other.impl_->segments) {
    if (s.n == 0) continue;
    impl_->starts.push_back(impl_->n);
    impl_->n += s.n;
    impl_->segments.push_back(std::move(s));
  }
  other.clear();
}

void IterationTable::shift_lines(std::uint32_t lines) {
  for (Segment& s : impl_->segments) s.line.add_to_nonzero(lines);
}

void IterationTable::set_source(std::uint16_t file, std::int32_t rank) {
  for (Segment& s : impl_->segments) {
    s.file = Column<std::uint16_t>{0};
    for (std::size_t i = 0; i < s.n; ++i) Segment::store(s.file, i, file, std::uint16_t{0});
    if (rank < 0) continue;
    for (std::size_t i = 0; i < s.n; ++i)
      if (s.rank.get(i) < 0) s.rank.put(i, rank);
  }
}

void IterationTable::clear() {
  impl_ = std::make_unique<Impl>();
}

void IterationTable::reserve(std::size_t records) {
  impl_->reserved = records;
  if (!impl_->segments.empty()) impl_->segments.back().reserve(records);
}

void IterationTable::shrink_to_fit() {
  for (Segment& s : impl_->segments) s.shrink_to_fit();
}

std::size_t IterationTable::memory_bytes() const {
  std::size_t b = 0;
  for (const Segment& s : impl_->segments) b += s.bytes();
  return b;
}

}  // namespace mfu
