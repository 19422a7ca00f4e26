#pragma once
// The digits of a column of decimals (DecimalColumn, src/decimal_column.hpp) in 2 bytes a value
// where they allow it. Consecutive values of a log's timer move little: a forward pass printed
// as "0.304817" is 304817 in digits, and the next few thousand records stay within a few
// thousand of it. So the digits are held in blocks of kBlock records, each a base and 16-bit
// offsets from it.
//
// - A block whose values spread over more than an offset can hold (a stall of 30 s among 1 s
//   steps) holds them as int32, on its own: one stall costs one block.
// - A column where many blocks do (timers with six decimals that vary by 10%) turns into plain
//   int32 storage for good, as all columns of digits were before.
// - A block's base moves when a value falls outside its window but the block's range would still
//   fit one (a loss that falls through the run).
//
// Reading gives back every value written, bit for bit; which form holds it is invisible.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "record_column.hpp"

namespace mfu::detail {

class DigitColumn {
 public:
  using value_type = std::int32_t;
  /// A missing value: what unwritten slots read.
  static constexpr std::int32_t kMissing = std::numeric_limits<std::int32_t>::min();
  /// Records of a block: 8 KiB of offsets, up to 16 KiB more when the block is wide.
  static constexpr std::size_t kBlock = 4096;

  [[nodiscard]] bool active() const { return size_ > 0; }

  [[nodiscard]] std::int32_t get(std::size_t i) const {
    if (!narrow_) return plain_.get(i);
    const std::size_t b = i / kBlock;
    if (b >= blocks_.size()) return kMissing;
    const Block& k = blocks_[b];
    if (k.state >= 0) return wide_value(k, i % kBlock);
    return decode(k, offsets_.get(i));
  }

  void put(std::size_t i, std::int32_t d) {
    if (i >= size_) size_ = i + 1;
    if (!narrow_) {
      plain_.put(i, d);
      return;
    }
    // The common write: into a block of offsets whose window holds d. (A missing value inside
    // the window is held as its offset: it decodes to kMissing all the same.)
    const std::size_t b = i / kBlock;
    if (b < blocks_.size()) {
      const Block& k = blocks_[b];
      const auto o = static_cast<std::uint64_t>(std::int64_t{d} - k.base);
      if (k.state == kNarrow && o <= kMaxOffset) {
        offsets_.put(i, static_cast<std::uint16_t>(o));
        return;
      }
    }
    put_rare(i, d);
  }

  /// Values [first, first + n) handed to put(k, value) for k = 0..n-1.
  template <class Put>
  void read(std::size_t first, std::size_t n, Put&& put) const {
    if (!narrow_) {
      plain_.read(first, n, put);
      return;
    }
    std::size_t k = 0;
    for (std::size_t i = first, end = first + n; i < end;) {
      const std::size_t b = i / kBlock;
      const std::size_t m = std::min(end, (b + 1) * kBlock) - i;
      if (b >= blocks_.size()) {
        for (std::size_t j = 0; j < m; ++j) put(k + j, kMissing);
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
  /// reading them (Column::uniform): a column of offsets that is one rule, under blocks that
  /// share one base (a constant's blocks all start from it); nullopt otherwise.
  [[nodiscard]] std::optional<std::int32_t> uniform(std::size_t n) const {
    if (!narrow_) return plain_.uniform(n);
    const std::optional<std::uint16_t> o = offsets_.uniform(n);
    if (!o || !wide_.empty()) return std::nullopt;
    if (*o == kNone) return kMissing;
    if (blocks_.empty()) return std::nullopt;  // (an offset is written with its block)
    // An offset other than kNone at every index below n: their blocks were all written.
    const std::size_t blocks = std::min(blocks_.size(), (n + kBlock - 1) / kBlock);
    for (std::size_t b = 0; b < blocks; ++b)
      if (blocks_[b].state != kNarrow || blocks_[b].base != blocks_[0].base) return std::nullopt;
    return decode(blocks_[0], *o);
  }
  /// Bytes held, for the record store's accounting.
  [[nodiscard]] std::size_t bytes() const {
    std::size_t wide = 0;
    for (const auto& w : wide_) wide += w.capacity() * sizeof(std::int32_t);
    return offsets_.bytes() + blocks_.capacity() * sizeof(Block) + wide + plain_.bytes();
  }
  void reserve(std::size_t n) {
    offsets_.reserve(n);
    plain_.reserve(n);
  }
  void shrink_to_fit() {
    offsets_.shrink_to_fit();
    plain_.shrink_to_fit();
  }
  void clear() { *this = DigitColumn(); }
  /// Whether values are held as blocks of offsets (false once the column is plain int32).
  [[nodiscard]] bool narrow() const { return narrow_; }
  /// Blocks held as int32 while the column is narrow.
  [[nodiscard]] std::size_t wide_blocks() const { return wide_.size(); }

 private:
  /// An offset past every value's: no value. Offsets run over [0, kMaxOffset].
  static constexpr std::uint16_t kNone = std::numeric_limits<std::uint16_t>::max();
  static constexpr std::int64_t kMaxOffset = kNone - 1;
  /// Wide blocks, past at least this many, that turn the column plain once they are more than an
  /// eighth of its blocks: the column's values spread too far for offsets, and each wide block
  /// costs 6 bytes a value (its unused offsets and its int32s) where plain storage costs 4.
  static constexpr std::size_t kWideBlocksBeforePlain = 4;

  static constexpr std::int32_t kEmpty = -2;   // Block::state: no value written yet
  static constexpr std::int32_t kNarrow = -1;  // offsets from base; >= 0: index in wide_
  struct Block {
    std::int64_t base = 0;  // a value is base + its offset
    std::int32_t state = kEmpty;
  };

  [[nodiscard]] static std::int32_t decode(const Block& k, std::uint16_t o) {
    // A select, not a branch: passes over a block then vectorize.
    const auto v = static_cast<std::int32_t>(k.base + o);
    return o == kNone ? kMissing : v;
  }
  /// Slot j of wide block k: its int32s reach as far as the block was written.
  [[nodiscard]] std::int32_t wide_value(const Block& k, std::size_t j) const {
    const auto& w = wide_[static_cast<std::size_t>(k.state)];
    return j < w.size() ? w[j] : kMissing;
  }
  void put_in_wide(const Block& k, std::size_t j, std::int32_t d) {
    auto& w = wide_[static_cast<std::size_t>(k.state)];
    if (j >= w.size()) {
      if (j >= w.capacity()) w.reserve(std::min(kBlock, std::max(2 * w.capacity(), j + 1)));
      w.resize(j + 1, kMissing);
    }
    w[j] = d;
  }
  /// Every write put() does not do inline: a block's first value, a missing value, a value
  /// outside the window, a write to a wide block.
  void put_rare(std::size_t i, std::int32_t d);
  /// Moves block b's base so that its values and d all fit, centring them in the window; false
  /// when they spread too far for one.
  bool rebase(std::size_t b, std::int32_t d);
  /// Turns block b into int32s and writes d at i (in it); turns the whole column plain when
  /// wide blocks have become too many.
  void put_wide(std::size_t b, std::size_t i, std::int32_t d);
  /// Plain int32 storage from now on: the values so far move over.
  void to_plain();

  Column<std::uint16_t> offsets_{kNone};
  std::vector<Block> blocks_;
  std::vector<std::vector<std::int32_t>> wide_;
  Column<std::int32_t> plain_{kMissing};
  bool narrow_ = true;
  std::size_t size_ = 0;  // one past the last index written
};

}  // namespace mfu::detail
