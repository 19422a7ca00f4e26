#pragma once
// An integer column of the record store in 2 bytes a value where its values allow it: the digits
// of a column of decimals (DecimalColumn, src/decimal_column.hpp), steps and ranks. Consecutive
// values move little: a forward pass printed as "0.304817" is 304817 in digits, and the next few
// thousand records stay within a few thousand of it; the steps of two ranks printing into one
// file go 1, 1, 2, 2, ... So a column has three forms, each taken for good once the one before
// no longer fits:
//
// 1. A rule and its exceptions (Column): steps +1, a constant rank, a timer always 0.
// 2. Blocks of kBlock records, each a base and 16-bit offsets from it.
//    - A block whose values spread over more than an offset can hold (a stall of 30 s among 1 s
//      steps) holds them as T, on its own: one stall costs one block.
//    - A block's base moves when a value falls outside its window but the block's range would
//      still fit one (a loss that falls through the run).
// 3. Plain storage of T, once many blocks hold T (timers with six decimals that vary by 10%).
//
// Reading gives back every value written, bit for bit; which form holds it is invisible.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "record_column.hpp"

namespace mfu::detail {

template <class T>
class NarrowColumn {
  static_assert(std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>);

 public:
  using value_type = T;
  /// Records of a block: 8 KiB of offsets, up to 4 or 8 times as many bytes when it is wide.
  static constexpr std::size_t kBlock = 4096;

  /// `fill`: what unwritten slots read (a missing value).
  explicit NarrowColumn(T fill) : fill_(fill), whole_(fill) {}

  [[nodiscard]] bool active() const { return size_ > 0; }

  [[nodiscard]] T get(std::size_t i) const {
    if (form_ != Form::kBlocks) return whole_.get(i);
    const std::size_t b = i / kBlock;
    if (b >= blocks_.size()) return fill_;
    const Block& k = blocks_[b];
    if (k.state >= 0) return wide_value(k, i % kBlock);
    return decode(k, offsets_.get(i));
  }

  void put(std::size_t i, T v) {
    if (i >= size_) size_ = i + 1;
    if (form_ == Form::kBlocks) {
      // The common write: into a block of offsets whose window holds v. (A missing value inside
      // the window is held as its offset: it decodes to the fill value all the same.)
      const std::size_t b = i / kBlock;
      if (b < blocks_.size()) {
        const Block& k = blocks_[b];
        const std::uint64_t o = offset(k.base, v);
        if (k.state == kNarrow && o <= kMaxOffset) {
          offsets_.put(i, static_cast<std::uint16_t>(o));
          return;
        }
      }
      put_rare(i, v);
    } else {
      whole_.put(i, v);
      if (form_ == Form::kRule && whole_.dense()) to_blocks();
    }
  }

  /// Values [first, first + n) handed to put(k, value) for k = 0..n-1.
  template <class Put>
  void read(std::size_t first, std::size_t n, Put&& put) const {
    if (form_ != Form::kBlocks) return whole_.read(first, n, put);
    std::size_t k = 0;
    for (std::size_t i = first, end = first + n; i < end;) {
      const std::size_t b = i / kBlock;
      const std::size_t m = std::min(end, (b + 1) * kBlock) - i;
      if (b >= blocks_.size()) {
        for (std::size_t j = 0; j < m; ++j) put(k + j, fill_);
      } else if (const Block& blk = blocks_[b]; blk.state >= 0) {
        for (std::size_t j = 0; j < m; ++j) put(k + j, wide_value(blk, i % kBlock + j));
      } else {
        offsets_.read(i, m, [&, k](std::size_t j, std::uint16_t o) { put(k + j, decode(blk, o)); });
      }
      k += m;
      i += m;
    }
  }

  /// The value every index of [0, n) holds when the column knows it is one value without
  /// reading them (Column::uniform): a rule, or blocks of one offset rule that share one base (a
  /// constant's blocks all start from it); nullopt otherwise.
  [[nodiscard]] std::optional<T> uniform(std::size_t n) const {
    if (form_ != Form::kBlocks) return whole_.uniform(n);
    const std::optional<std::uint16_t> o = offsets_.uniform(n);
    if (!o || !wide_.empty()) return std::nullopt;
    if (*o == kNone) return fill_;
    if (blocks_.empty()) return std::nullopt;  // (an offset is written with its block)
    const std::size_t blocks = std::min(blocks_.size(), (n + kBlock - 1) / kBlock);
    for (std::size_t b = 0; b < blocks; ++b)
      if (blocks_[b].state != kNarrow || blocks_[b].base != blocks_[0].base) return std::nullopt;
    return decode(blocks_[0], *o);
  }

  /// Bytes held, for the record store's accounting.
  [[nodiscard]] std::size_t bytes() const {
    std::size_t wide = 0;
    for (const auto& w : wide_) wide += w.capacity() * sizeof(T);
    return whole_.bytes() + offsets_.bytes() + blocks_.capacity() * sizeof(Block) + wide;
  }
  /// Expects about n values: the hint goes to the blocks' offsets, and to plain storage once the
  /// column takes it. Not to the rule's: it is plain only for the moment before the values move
  /// to blocks, early in the common case (reserved, that moment filled a whole chunk of T for
  /// each column of each piece).
  void reserve(std::size_t n) {
    offsets_.reserve(n);
    reserved_ = n;
  }
  void shrink_to_fit() {
    whole_.shrink_to_fit();
    offsets_.shrink_to_fit();
  }
  void clear() { *this = NarrowColumn(fill_); }
  /// Whether values are held in blocks of offsets (the second form).
  [[nodiscard]] bool in_blocks() const { return form_ == Form::kBlocks; }
  /// Whether values are held as plain T (the third form).
  [[nodiscard]] bool plain() const { return form_ == Form::kPlain; }
  /// Blocks held as T while the column is in blocks.
  [[nodiscard]] std::size_t wide_blocks() const { return wide_.size(); }

 private:
  enum class Form : std::uint8_t { kRule, kBlocks, kPlain };
  /// An offset past every value's: the fill value. Offsets run over [0, kMaxOffset].
  static constexpr std::uint16_t kNone = std::numeric_limits<std::uint16_t>::max();
  static constexpr std::uint64_t kMaxOffset = kNone - 1;
  /// Wide blocks, past at least this many, that turn the column plain once they are more than an
  /// eighth of its blocks: the column's values spread too far for offsets, and each wide block
  /// costs its unused offsets besides its T's.
  static constexpr std::size_t kWideBlocksBeforePlain = 4;

  static constexpr std::int32_t kEmpty = -2;   // Block::state: no value written yet
  static constexpr std::int32_t kNarrow = -1;  // offsets from base; >= 0: index in wide_
  struct Block {
    std::uint64_t base = 0;  // a value is base + its offset, modulo 2^64
    std::int32_t state = kEmpty;
  };

  /// v - base modulo 2^64. Values are base + offset modulo 2^64 too, so whatever v and base
  /// (near the ends of T), an offset up to kMaxOffset gives v back exactly.
  [[nodiscard]] static std::uint64_t offset(std::uint64_t base, T v) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) - base;
  }
  [[nodiscard]] T decode(const Block& k, std::uint16_t o) const {
    // A select, not a branch: passes over a block then vectorize.
    const auto v = static_cast<T>(static_cast<std::int64_t>(k.base + o));
    return o == kNone ? fill_ : v;
  }
  /// Slot j of wide block k: its values reach as far as the block was written.
  [[nodiscard]] T wide_value(const Block& k, std::size_t j) const {
    const auto& w = wide_[static_cast<std::size_t>(k.state)];
    return j < w.size() ? w[j] : fill_;
  }

  /// Every write put() does not do inline in the second form: a block's first value, a missing
  /// value, a value outside the window, a write to a wide block.
  void put_rare(std::size_t i, T v);
  void put_in_wide(const Block& k, std::size_t j, T v);
  /// Moves block b's base so that its values and v all fit, centring them in the window; false
  /// when they spread too far for one.
  bool rebase(std::size_t b, T v);
  /// Turns block b into T's and writes v at i (in it); turns the whole column plain when wide
  /// blocks have become too many.
  void put_wide(std::size_t b, std::size_t i, T v);
  /// From the rule to blocks, once the rule's exceptions made it plain storage.
  void to_blocks();
  /// Plain storage from now on: the values so far move over.
  void to_plain();

  T fill_;
  Form form_ = Form::kRule;
  Column<T> whole_;  // the values in the first and third forms (empty in the second)
  Column<std::uint16_t> offsets_{kNone};
  std::vector<Block> blocks_;
  std::vector<std::vector<T>> wide_;
  std::size_t reserved_ = 0;  // reserve()'s hint, for plain storage
  std::size_t size_ = 0;      // one past the last index written
};

extern template class NarrowColumn<std::int32_t>;
extern template class NarrowColumn<std::int64_t>;

}  // namespace mfu::detail
