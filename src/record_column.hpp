#pragma once
// One column of the record store (IterationTable, src/iteration_table.cpp): a rule and its
// exceptions, or plain storage in chunks.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace mfu::detail {

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
  using value_type = T;
  /// Slots of a chunk (a power of two for every T).
  static constexpr std::size_t kChunk = kChunkBytes / sizeof(T);

  explicit Column(T fill) : fill_(fill) {}
  [[nodiscard]] bool active() const { return size_ > 0; }
  /// Whether the column is plain storage (a rule's exceptions grew too many).
  [[nodiscard]] bool dense() const { return dense_; }
  [[nodiscard]] T get(std::size_t i) const {
    if (i >= size_) return fill_;
    if (dense_) return chunks_[i / kChunk][i % kChunk];
    return get_by_rule(i);  // out of line: keeps the common cases small enough to inline
  }
  void put(std::size_t i, T v) {
    // Small enough to inline into the parsers' writes; the rule's bookkeeping is out of line.
    if (dense_)
      put_dense(i, v);
    else
      put_by_rule(i, v);
  }
  /// The value every index of [0, n) holds, when the column knows it is one value without
  /// reading them (nothing written, or one constant rule without exceptions, with the fill
  /// value around it equal to the rule's); nullopt otherwise (plain storage is not scanned).
  [[nodiscard]] std::optional<T> uniform(std::size_t n) const {
    if (n == 0 || dense_ || !exceptions_.empty()) return std::nullopt;
    const std::size_t hi = std::min(size_, n);
    if (size_ == 0 || first_ >= hi) return fill_;  // all the fill value
    if constexpr (std::is_integral_v<T>)
      if (stride_ != 0 && hi - first_ > 1) return std::nullopt;
    if ((first_ > 0 || hi < n) && !same_value(base_, fill_)) return std::nullopt;
    return base_;
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
  /// Adds `delta` to every value but the zeros (line numbers moved by the lines before them,
  /// 0 being no line): a rule without zeros keeps its form (its base moves), else the values
  /// are rewritten in place.
  void add_to_nonzero(T delta) requires std::is_unsigned_v<T> {
    if (size_ == 0 || delta == 0) return;
    if (!dense_) {
      // Rule values base + j * stride for j < size - first: no zero (and no wrap) when the
      // base and stride are positive and the last value is below the type's maximum.
      const std::uint64_t last = static_cast<std::uint64_t>(base_) +
                                 static_cast<std::uint64_t>(size_ - 1 - first_) *
                                     static_cast<std::uint64_t>(stride_ > 0 ? stride_ : 0);
      if (base_ > 0 && stride_ >= 0 && last + delta <= std::numeric_limits<T>::max()) {
        base_ = static_cast<T>(base_ + delta);
        for (auto& e : exceptions_)
          if (e.second != 0) e.second = static_cast<T>(e.second + delta);
        return;
      }
      materialize();
    }
    for (std::size_t i = 0; i < size_; ++i) {
      T& v = chunks_[i / kChunk][i % kChunk];
      if (v != 0) v = static_cast<T>(v + delta);
    }
  }
  [[nodiscard]] std::size_t bytes() const {
    if (!dense_) return exceptions_.capacity() * sizeof(exceptions_[0]);
    return capacity() * sizeof(T);
  }
  /// Gives back the unused end of plain storage's last chunk when most of it is unused: a column
  /// that will not grow much more (a finished piece of a file). A 2 MiB chunk is a whole huge
  /// page however little of it is used: with 16 pieces of a 1 GiB native log those tails took
  /// peak RSS from 233 to 292 MB. Writing past the end afterwards grows the chunk again.
  void shrink_to_fit() {
    if (!dense_ || chunks_.empty()) return;
    const std::size_t before_last = (chunks_.size() - 1) * kChunk;
    const std::size_t used = std::max<std::size_t>(size_ - before_last, 1);
    std::size_t& cap = chunks_.size() == 1 ? cap0_ : tail_cap_;
    // Only a chunk three quarters empty is copied into a smaller block: the copy's fresh 4 KiB
    // pages fault in, and copying every chunk at least a quarter empty took the 1 GiB native
    // log from 7,700 to 15,200 page faults (perf stat) to save 15 MB of its 231 MB peak.
    if (used * 4 > cap) return;
    std::unique_ptr<T[]> kept(new T[used]);
    std::copy_n(chunks_.back().get(), used, kept.get());
    chunks_.back() = std::move(kept);
    cap = used;
    capacity_ = capacity();
  }
  /// Expects about `n` values: plain storage starts with room for that many (up to one chunk)
  /// instead of 256 doubled as it fills, which copies the values each time and faults in fresh
  /// pages (with the pieces of a 1 GiB native log reserving, 20,600 -> 14,600 page faults).
  void reserve(std::size_t n) { reserved_ = std::min(n, kChunk); }
  void clear() {
    chunks_.clear();
    exceptions_.clear();
    tail_cap_ = kChunk;
    size_ = first_ = cap0_ = capacity_ = 0;
    dense_ = false;
    stride_known_ = false;
    stride_ = 0;
  }
  Column(const Column& o)
      : fill_(o.fill_),
        size_(o.size_),
        cap0_(o.cap0_),
        tail_cap_(o.tail_cap_),
        capacity_(o.capacity_),
        reserved_(o.reserved_),
        first_(o.first_),
        dense_(o.dense_),
        stride_known_(o.stride_known_),
        base_(o.base_),
        stride_(o.stride_),
        exceptions_(o.exceptions_) {
    for (std::size_t c = 0; c < o.chunks_.size(); ++c) {
      const std::size_t cap = o.chunk_capacity(c);
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

  /// Slots of chunk c: the first grows by doubling, the last may have been shrunk.
  [[nodiscard]] std::size_t chunk_capacity(std::size_t c) const {
    if (c == 0) return cap0_;
    return c + 1 == chunks_.size() ? tail_cap_ : kChunk;
  }
  /// Slots in all chunks.
  [[nodiscard]] std::size_t capacity() const {
    if (chunks_.empty()) return 0;
    if (chunks_.size() == 1) return cap0_;
    return cap0_ + (chunks_.size() - 2) * kChunk + tail_cap_;
  }

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
    std::int64_t dv = 0;  // values at the two ends of int64 differ by more than it holds: no rule
    if (__builtin_sub_overflow(static_cast<std::int64_t>(v), static_cast<std::int64_t>(base_), &dv))
      return;
    const auto di = static_cast<std::int64_t>(i - first_);
    // A stride past 2^20 (steps like 1e15 apart) is no rule: the product below stays in range.
    if (dv % di == 0 && dv / di <= (std::int64_t{1} << 20) && dv / di >= -(std::int64_t{1} << 20))
      stride_ = dv / di;
  }
  void materialize() {
    Column dense(fill_);
    dense.reserved_ = reserved_;
    dense.dense_ = true;
    dense.size_ = 0;
    for (std::size_t i = first_; i < size_; ++i) dense.put_dense(i, get(i));
    dense.size_ = std::max(dense.size_, size_);
    *this = std::move(dense);
  }
  /// Makes room for index n-1, filling new slots with the fill value (leaving them unwritten, to
  /// be filled when a write skips them, made the Megatron line benchmark 5% slower: the writes
  /// then reach lines not in cache). The first chunk starts with the slots reserve() asked for,
  /// or 256, and grows by doubling, so that a short log does not pay for a whole chunk per
  /// column.
  void ensure(std::size_t n) {
    if (n <= kChunk && (chunks_.empty() || cap0_ < n)) {
      std::size_t cap = std::max<std::size_t>(cap0_ == 0 ? reserved_ : cap0_ * 2, 256);
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
    if (chunks_.size() >= 2 && tail_cap_ < kChunk && n > capacity()) {
      // The last chunk was shrunk: it takes its whole size back before another follows.
      std::unique_ptr<T[]> grown(new T[kChunk]);
      std::copy_n(chunks_.back().get(), tail_cap_, grown.get());
      std::fill_n(grown.get() + tail_cap_, kChunk - tail_cap_, fill_);
      chunks_.back() = std::move(grown);
      tail_cap_ = kChunk;
    }
    while (chunks_.size() * kChunk < n) {
      chunks_.emplace_back(new T[kChunk]);
      std::fill_n(chunks_.back().get(), kChunk, fill_);
    }
    capacity_ = capacity();
    if (size_ < n) size_ = n;
  }
  /// put() while the column holds a rule and its exceptions (or nothing yet).
  [[gnu::noinline]] void put_by_rule(std::size_t i, T v) {
    if (size_ == 0) {  // the first value sets the rule
      first_ = i;
      base_ = v;
      size_ = i + 1;
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
  void put_dense(std::size_t i, T v) {
    if (i >= size_) {
      // Slots past the size within the chunks already hold the fill value.
      if (i < capacity_)
        size_ = i + 1;
      else
        ensure(i + 1);
    }
    chunks_[i / kChunk][i % kChunk] = v;
  }

  T fill_;
  std::size_t size_ = 0;
  std::size_t cap0_ = 0;           // slots in the first chunk
  std::size_t tail_cap_ = kChunk;  // slots in the last chunk, when it is not the first
  std::size_t capacity_ = 0;       // capacity(), for the check on every write past the size
  std::size_t reserved_ = 0;       // slots the first chunk starts with (reserve())
  std::size_t first_ = 0;          // indices below it hold the fill value (rule mode)
  bool dense_ = false;
  bool stride_known_ = false;
  T base_{};
  std::int64_t stride_ = 0;
  Exceptions exceptions_;
  std::vector<std::unique_ptr<T[]>> chunks_;
};

}  // namespace mfu::detail
