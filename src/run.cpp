#include "mfu/run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "mfu/error.hpp"
#include "text.hpp"

namespace mfu {

const char* to_string(Phase p) {
  switch (p) {
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kForwardBackward: return "forward_backward";
    case Phase::kOptimizer: return "optimizer";
    case Phase::kComm: return "comm";
    case Phase::kData: return "data";
    case Phase::kGenerate: return "generate";
    case Phase::kOther: return "other";
    case Phase::kCompute: return "compute";
    case Phase::kIdle: return "idle";
  }
  return "?";
}

const char* phase_key(Phase p) {
  switch (p) {
    case Phase::kForward: return "forward_s";
    case Phase::kBackward: return "backward_s";
    case Phase::kForwardBackward: return "forward_backward_s";
    case Phase::kOptimizer: return "optimizer_s";
    case Phase::kComm: return "comm_s";
    case Phase::kData: return "data_s";
    case Phase::kGenerate: return "generate_s";
    case Phase::kOther: return "other_s";
    case Phase::kCompute: return "compute_s";
    case Phase::kIdle: return "idle_s";
  }
  return "?";
}

const char* to_string(EventKind k) {
  switch (k) {
    case EventKind::kCheckpointSave: return "checkpoint_save";
    case EventKind::kCheckpointLoad: return "checkpoint_load";
    case EventKind::kEval: return "eval";
    case EventKind::kRestart: return "restart";
    case EventKind::kStartup: return "startup";
    case EventKind::kStall: return "stall";
    case EventKind::kOther: return "other";
  }
  return "?";
}

// ---- IterationTable -------------------------------------------------------------------------

namespace {

/// Bytes of a plain-storage chunk: 2 MiB, one transparent huge page where the program's
/// allocator backs large blocks with them (apps/mfu/large_pages.cpp; page faults on fresh 4 KiB
/// pages were 70% of the faults left in `mfu analyze` on a 1 GiB log, most of them here).
constexpr std::size_t kChunkBytes = std::size_t{2} << 20;

/// Equality that treats NaN as equal to NaN (a missing value matches a missing value).
template <class T>
bool same_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a == b || (std::isnan(a) && std::isnan(b));
  } else {
    return a == b;
  }
}

/// A column of one field of the records. Most columns of a real log follow a rule: steps and
/// line numbers count up by a fixed stride, tokens per step and the file index stay constant.
/// Such a column holds only the rule (first index, base, stride) and the values that break it
/// (exceptions, sorted by index); it turns into plain storage, in fixed-size chunks (no
/// reallocation spikes when it grows), once exceptions would take more than half that storage.
/// Integer columns may have a stride; floating-point ones are constant (stride 0).
template <class T>
class Column {
 public:
  /// Slots of a chunk (a power of two for every T).
  static constexpr std::size_t kChunk = kChunkBytes / sizeof(T);

  explicit Column(T fill) : fill_(fill) {}
  [[nodiscard]] bool active() const { return size_ > 0; }
  [[nodiscard]] T get(std::size_t i) const {
    if (i >= size_) return fill_;
    if (dense_) return chunks_[i / kChunk][i % kChunk];
    return get_by_rule(i);  // out of line: keeps the common cases small enough to inline
  }
  void put(std::size_t i, T v) {
    if (size_ == 0) {  // the first value sets the rule
      first_ = i;
      base_ = v;
      size_ = i + 1;
      return;
    }
    if (dense_) {
      put_dense(i, v);
      return;
    }
    if (i < first_ || i > size_) {
      // Before the first value or past a gap, the unwritten slots hold the fill value, which
      // the rule does not give: plain storage keeps them.
      materialize();
      put_dense(i, v);
      return;
    }
    if constexpr (std::is_integral_v<T>) learn_stride(i, v);
    if (i >= size_) size_ = i + 1;
    const auto it = find(i);
    const bool has = it != exceptions_.end() && it->first == i;
    if (same_value(v, rule(i))) {
      if (has) exceptions_.erase(it);
      return;
    }
    if (has) {
      it->second = v;
      return;
    }
    if (it != exceptions_.end() && exceptions_.size() >= 64) {
      // Exceptions written out of order would each shift the rest (quadratic in the worst
      // case, a pass that rewrites records backwards): plain storage instead.
      materialize();
      put_dense(i, v);
      return;
    }
    exceptions_.insert(it, {i, v});
    if (exceptions_.size() > 64 &&
        exceptions_.size() * sizeof(exceptions_[0]) * 2 > (size_ - first_) * sizeof(T))
      materialize();
  }
  /// Values [first, first + n) handed to put(k, value) for k = 0..n-1: a pass over many
  /// records reads a column at a time, without get()'s branches per index.
  template <class Put>
  void read(std::size_t first, std::size_t n, Put&& put) const {
    const std::size_t stored = std::min(first + n, size_);
    std::size_t k = 0;
    if (dense_) {
      for (std::size_t i = first; i < stored;) {
        const T* chunk = chunks_[i / kChunk].get();
        const std::size_t off = i % kChunk, m = std::min(kChunk - off, stored - i);
        for (std::size_t j = 0; j < m; ++j) put(k++, chunk[off + j]);
        i += m;
      }
    } else if (first < stored) {
      auto e = find(first);
      for (std::size_t i = first; i < stored; ++i) {
        T v = i < first_ ? fill_ : rule(i);
        if (e != exceptions_.end() && e->first == i) v = (e++)->second;
        put(k++, v);
      }
    }
    for (; k < n; ++k) put(k, fill_);
  }
  /// Appends the first `count` values of `o` after index `at`, freeing o's storage as it goes
  /// so that appending a large table does not hold both copies at once.
  void append(Column&& o, std::size_t at, std::size_t count) {
    if (!o.active()) return;  // all fill values: get() already returns them
    for (std::size_t i = 0; i < count; ++i) {
      put(at + i, o.get(i));
      if (o.dense_ && (i + 1) % kChunk == 0) o.chunks_[i / kChunk].reset();
    }
    o.clear();
  }
  void resize_down(std::size_t n) {
    if (size_ <= n) return;
    if (dense_) {
      for (std::size_t i = n; i < size_; ++i) chunks_[i / kChunk][i % kChunk] = fill_;
    } else {
      exceptions_.erase(find(n), exceptions_.end());
    }
    size_ = n;
    if (size_ <= first_) clear();
  }
  [[nodiscard]] std::size_t bytes() const {
    if (!dense_) return exceptions_.capacity() * sizeof(exceptions_[0]);
    return chunks_.empty() ? 0 : (cap0_ + (chunks_.size() - 1) * kChunk) * sizeof(T);
  }
  void clear() {
    chunks_.clear();
    exceptions_.clear();
    size_ = first_ = cap0_ = 0;
    dense_ = false;
    stride_known_ = false;
    stride_ = 0;
  }
  Column(const Column& o)
      : fill_(o.fill_),
        size_(o.size_),
        cap0_(o.cap0_),
        first_(o.first_),
        dense_(o.dense_),
        stride_known_(o.stride_known_),
        base_(o.base_),
        stride_(o.stride_),
        exceptions_(o.exceptions_) {
    for (std::size_t c = 0; c < o.chunks_.size(); ++c) {
      const std::size_t cap = c == 0 ? o.cap0_ : kChunk;
      chunks_.emplace_back(new T[cap]);
      std::copy_n(o.chunks_[c].get(), cap, chunks_.back().get());
    }
  }
  Column& operator=(const Column& o) {
    if (this != &o) {
      Column tmp(o);
      *this = std::move(tmp);
    }
    return *this;
  }
  Column(Column&&) noexcept = default;
  Column& operator=(Column&&) noexcept = default;

 private:
  using Exceptions = std::vector<std::pair<std::size_t, T>>;

  [[nodiscard]] T get_by_rule(std::size_t i) const {
    if (i < first_) return fill_;
    if (!exceptions_.empty()) {
      const auto it = find(i);
      if (it != exceptions_.end() && it->first == i) return it->second;
    }
    return rule(i);
  }

  [[nodiscard]] T rule(std::size_t i) const {
    if constexpr (std::is_integral_v<T>) {
      // Modular arithmetic (no signed overflow): the rule reproduces what was written.
      const auto offset =
          static_cast<std::uint64_t>(static_cast<std::int64_t>(i - first_) * stride_);
      return static_cast<T>(static_cast<std::uint64_t>(base_) + offset);
    } else {
      (void)i;
      return base_;
    }
  }
  [[nodiscard]] typename Exceptions::iterator find(std::size_t i) {
    if (exceptions_.empty() || exceptions_.back().first < i) return exceptions_.end();
    return std::lower_bound(exceptions_.begin(), exceptions_.end(), i,
                            [](const auto& e, std::size_t k) { return e.first < k; });
  }
  [[nodiscard]] typename Exceptions::const_iterator find(std::size_t i) const {
    if (exceptions_.empty() || exceptions_.back().first < i) return exceptions_.end();
    return std::lower_bound(exceptions_.begin(), exceptions_.end(), i,
                            [](const auto& e, std::size_t k) { return e.first < k; });
  }
  /// The second value written sets an integer column's stride, when it divides evenly.
  void learn_stride(std::size_t i, T v) {
    if (stride_known_ || i == first_ || !exceptions_.empty()) return;
    stride_known_ = true;
    const auto dv = static_cast<std::int64_t>(v) - static_cast<std::int64_t>(base_);
    const auto di = static_cast<std::int64_t>(i - first_);
    // A stride past 2^20 (steps like 1e15 apart) is no rule: the product below stays in range.
    if (dv % di == 0 && dv / di <= (std::int64_t{1} << 20) && dv / di >= -(std::int64_t{1} << 20))
      stride_ = dv / di;
  }
  void materialize() {
    Column dense(fill_);
    dense.dense_ = true;
    dense.size_ = 0;
    for (std::size_t i = first_; i < size_; ++i) dense.put_dense(i, get(i));
    dense.size_ = std::max(dense.size_, size_);
    *this = std::move(dense);
  }
  /// Makes room for index n-1, filling new slots with the fill value. The first chunk grows by
  /// doubling, so that a short log does not pay for 64K slots per column.
  void ensure(std::size_t n) {
    if (n <= kChunk && (chunks_.empty() || cap0_ < n)) {
      std::size_t cap = std::max<std::size_t>(cap0_ == 0 ? 256 : cap0_ * 2, 256);
      while (cap < n) cap *= 2;
      cap = std::min(cap, kChunk);
      std::unique_ptr<T[]> grown(new T[cap]);
      if (!chunks_.empty()) std::copy_n(chunks_[0].get(), cap0_, grown.get());
      std::fill_n(grown.get() + cap0_, cap - cap0_, fill_);
      if (chunks_.empty())
        chunks_.push_back(std::move(grown));
      else
        chunks_[0] = std::move(grown);
      cap0_ = cap;
    } else if (n > kChunk && cap0_ < kChunk) {
      ensure(kChunk);
    }
    while (chunks_.size() * kChunk < n) {
      chunks_.emplace_back(new T[kChunk]);
      std::fill_n(chunks_.back().get(), kChunk, fill_);
    }
    if (size_ < n) size_ = n;
  }
  void put_dense(std::size_t i, T v) {
    if (i >= size_) {
      // Slots past the size within the chunks already hold the fill value.
      const std::size_t capacity = chunks_.size() <= 1 ? cap0_ : chunks_.size() * kChunk;
      if (i < capacity)
        size_ = i + 1;
      else
        ensure(i + 1);
    }
    chunks_[i / kChunk][i % kChunk] = v;
  }

  T fill_;
  std::size_t size_ = 0;
  std::size_t cap0_ = 0;   // slots in the first chunk (the others hold kChunk)
  std::size_t first_ = 0;  // indices below it hold the fill value (rule mode)
  bool dense_ = false;
  bool stride_known_ = false;
  T base_{};
  std::int64_t stride_ = 0;
  Exceptions exceptions_;
  std::vector<std::unique_ptr<T[]>> chunks_;
};

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();

}  // namespace

struct IterationTable::Impl {
  std::size_t n = 0;
  Column<std::int64_t> step{-1};
  Column<std::uint32_t> count{1};
  Column<std::uint32_t> line{0};
  Column<std::int32_t> rank{-1};
  Column<std::uint16_t> file{0};
  Column<double> timestamp{kUnknown};
  // Times, work and the framework's FLOP/s keep double precision: MFU and every bucket derive
  // from them, and a float's 7 digits would show as noise (1.248e15 -> 1.24800002e15 FLOPs).
  // Phase timers too: each bucket is checked to the microsecond over the whole run. Loss and
  // the printed MFU are kept as float: 7 significant digits is below the resolution any log
  // prints them with, and halves their memory.
  Column<double> time{kUnknown};
  Column<double> tokens{kUnknown};
  Column<double> samples{kUnknown};
  Column<float> loss{kNaNf};
  Column<double> model_flops{kUnknown};
  Column<double> reported_flops{kUnknown};
  Column<float> reported_mfu{kNaNf};
  std::array<Column<double>, kPhaseCount> phase{Column<double>{kUnknown}, Column<double>{kUnknown},
                                                Column<double>{kUnknown}, Column<double>{kUnknown},
                                                Column<double>{kUnknown}, Column<double>{kUnknown},
                                                Column<double>{kUnknown}, Column<double>{kUnknown},
                                                Column<double>{kUnknown}, Column<double>{kUnknown}};

  /// Writes v at i, except that a column no record has used yet stays unallocated.
  template <class T, class V>
  static void store(Column<T>& c, std::size_t i, V v, V fill) {
    bool is_fill = false;
    if constexpr (std::is_floating_point_v<V>) {
      is_fill = std::isnan(v) ? std::isnan(fill) : v == fill;
    } else {
      is_fill = v == fill;
    }
    if (is_fill && !c.active()) return;
    c.put(i, static_cast<T>(v));
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
    it.step = step.get(i);
    it.count = count.get(i);
    it.line = line.get(i);
    it.rank = rank.get(i);
    it.file = file.get(i);
    it.timestamp_s = timestamp.get(i);
    it.time_s = time.get(i);
    it.tokens = tokens.get(i);
    it.samples = samples.get(i);
    it.loss = loss.get(i);
    it.model_flops = model_flops.get(i);
    it.reported_flops_per_gpu = reported_flops.get(i);
    it.reported_mfu = reported_mfu.get(i);
    for (std::size_t p = 0; p < kPhaseCount; ++p) it.phase[p] = phase[p].get(i);
    return it;
  }

  void read_work(std::size_t first, std::size_t m, Iteration* out) const {
    count.read(first, m, [out](std::size_t k, std::uint32_t v) { out[k].count = v; });
    tokens.read(first, m, [out](std::size_t k, double v) { out[k].tokens = v; });
    samples.read(first, m, [out](std::size_t k, double v) { out[k].samples = v; });
    model_flops.read(first, m, [out](std::size_t k, double v) { out[k].model_flops = v; });
    reported_flops.read(first, m,
                        [out](std::size_t k, double v) { out[k].reported_flops_per_gpu = v; });
    reported_mfu.read(first, m, [out](std::size_t k, float v) { out[k].reported_mfu = v; });
  }

  void read_block(std::size_t first, std::size_t m, Iteration* out) const {
    read_work(first, m, out);
    step.read(first, m, [out](std::size_t k, std::int64_t v) { out[k].step = v; });
    line.read(first, m, [out](std::size_t k, std::uint32_t v) { out[k].line = v; });
    rank.read(first, m, [out](std::size_t k, std::int32_t v) { out[k].rank = v; });
    file.read(first, m, [out](std::size_t k, std::uint16_t v) { out[k].file = v; });
    timestamp.read(first, m, [out](std::size_t k, double v) { out[k].timestamp_s = v; });
    time.read(first, m, [out](std::size_t k, double v) { out[k].time_s = v; });
    loss.read(first, m, [out](std::size_t k, float v) { out[k].loss = v; });
    for (std::size_t p = 0; p < kPhaseCount; ++p)
      phase[p].read(first, m, [out, p](std::size_t k, double v) { out[k].phase[p] = v; });
  }

  void append(Impl&& o) {
    const std::size_t at = n, m = o.n;
    step.append(std::move(o.step), at, m);
    count.append(std::move(o.count), at, m);
    line.append(std::move(o.line), at, m);
    rank.append(std::move(o.rank), at, m);
    file.append(std::move(o.file), at, m);
    timestamp.append(std::move(o.timestamp), at, m);
    time.append(std::move(o.time), at, m);
    tokens.append(std::move(o.tokens), at, m);
    samples.append(std::move(o.samples), at, m);
    loss.append(std::move(o.loss), at, m);
    model_flops.append(std::move(o.model_flops), at, m);
    reported_flops.append(std::move(o.reported_flops), at, m);
    reported_mfu.append(std::move(o.reported_mfu), at, m);
    for (std::size_t p = 0; p < kPhaseCount; ++p) phase[p].append(std::move(o.phase[p]), at, m);
    n += m;
    o.n = 0;
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

std::int64_t IterationTable::step(std::size_t i) const {
  return impl_->step.get(i);
}

std::uint32_t IterationTable::count(std::size_t i) const {
  return impl_->count.get(i);
}
std::uint32_t IterationTable::line(std::size_t i) const {
  return impl_->line.get(i);
}
std::int32_t IterationTable::rank(std::size_t i) const {
  return impl_->rank.get(i);
}
std::uint16_t IterationTable::file(std::size_t i) const {
  return impl_->file.get(i);
}
double IterationTable::timestamp(std::size_t i) const {
  return impl_->timestamp.get(i);
}
double IterationTable::model_flops(std::size_t i) const {
  return impl_->model_flops.get(i);
}

double IterationTable::phase(std::size_t i, Phase p) const {
  return impl_->phase[static_cast<std::size_t>(p)].get(i);
}

bool IterationTable::has_phase(Phase p) const {
  return impl_->phase[static_cast<std::size_t>(p)].active();
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
  impl_->write(impl_->n, it);
  ++impl_->n;
}

void IterationTable::set(std::size_t i, const Iteration& it) {
  if (i < impl_->n) impl_->write(i, it);
}

Iteration IterationTable::operator[](std::size_t i) const {
  return impl_->read(i);
}

void IterationTable::read(std::size_t first, std::size_t n, Iteration* out, bool work_only) const {
  if (first > impl_->n || n > impl_->n - first)
    throw InternalError("IterationTable::read past the last record");
  if (work_only)
    impl_->read_work(first, n, out);
  else
    impl_->read_block(first, n, out);
}

void IterationTable::read(Phase p, std::size_t first, std::size_t n, double* out) const {
  if (first > impl_->n || n > impl_->n - first)
    throw InternalError("IterationTable::read past the last record");
  impl_->phase[static_cast<std::size_t>(p)].read(first, n,
                                                 [out](std::size_t k, double v) { out[k] = v; });
}

void IterationTable::pop_back() {
  if (impl_->n == 0) return;
  Iteration blank;
  impl_->write(impl_->n - 1, blank);
  --impl_->n;
}

std::size_t IterationTable::size() const {
  return impl_->n;
}
void IterationTable::append(IterationTable&& other) {
  if (this == &other) return;
  impl_->append(std::move(*other.impl_));
}
void IterationTable::clear() {
  impl_ = std::make_unique<Impl>();
}
std::size_t IterationTable::memory_bytes() const {
  return impl_->bytes();
}

// ---- RunMeta --------------------------------------------------------------------------------

void RunMeta::set(const std::string& key, double value, const std::string& source, bool overwrite) {
  if (!overwrite && values_.count(key)) return;
  values_[key] = MetaValue{value, source, overwrite};
}

void RunMeta::set(const std::string& key, const std::string& value, const std::string& source,
                  bool overwrite) {
  if (!overwrite && values_.count(key)) return;
  // Text from a log is kept printable: no report or warning can carry its control characters.
  values_[key] =
      MetaValue{detail::needs_printable(value) ? detail::printable(value) : value,
                detail::needs_printable(source) ? detail::printable(source) : source, overwrite};
}

std::vector<RunMeta::Conflict> RunMeta::conflicts_with(const RunMeta& other) const {
  std::vector<Conflict> out;
  for (const auto& [key, mine] : values_) {
    const auto it = other.values_.find(key);
    if (it != other.values_.end() && it->second.value != mine.value)
      out.push_back(Conflict{key, mine, it->second});
  }
  return out;
}

std::optional<double> RunMeta::number(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  if (const double* d = std::get_if<double>(&it->second.value)) return *d;
  return std::nullopt;
}

std::optional<std::string> RunMeta::text(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  if (const std::string* s = std::get_if<std::string>(&it->second.value)) return *s;
  return std::nullopt;
}

std::string RunMeta::source(const std::string& key) const {
  auto it = values_.find(key);
  return it == values_.end() ? std::string() : it->second.source;
}

void RunMeta::fill_from(const RunMeta& other) {
  for (const auto& [k, v] : other.values_)
    if (!values_.count(k)) values_[k] = v;
}

}  // namespace mfu
