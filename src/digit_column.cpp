// The rare paths of DigitColumn (src/digit_column.hpp): a block's first value, a base that
// moves, a block or the whole column turning into int32s.
#include "digit_column.hpp"

namespace mfu::detail {

void DigitColumn::put_rare(std::size_t i, std::int32_t d) {
  const std::size_t b = i / kBlock;
  if (b >= blocks_.size()) blocks_.resize(b + 1);
  Block& k = blocks_[b];
  if (k.state >= 0) {
    put_in_wide(k, i % kBlock, d);
    return;
  }
  if (d == kMissing) {
    offsets_.put(i, kNone);
    return;
  }
  if (k.state == kEmpty) {
    k.base = std::int64_t{d} - kMaxOffset / 2;  // centred: room on both sides
    k.state = kNarrow;
  } else if (!rebase(b, d)) {
    put_wide(b, i, d);
    return;
  }
  offsets_.put(i, static_cast<std::uint16_t>(d - k.base));
}

bool DigitColumn::rebase(std::size_t b, std::int32_t d) {
  Block& k = blocks_[b];
  const std::size_t first = b * kBlock, end = std::min(size_, first + kBlock);
  std::int64_t lo = d, hi = d;
  for (std::size_t j = first; j < end; ++j) {
    const std::int32_t v = decode(k, offsets_.get(j));
    if (v == kMissing) continue;
    lo = std::min<std::int64_t>(lo, v);
    hi = std::max<std::int64_t>(hi, v);
  }
  if (hi - lo > kMaxOffset) return false;
  const std::int64_t base = lo - (kMaxOffset - (hi - lo)) / 2;
  for (std::size_t j = first; j < end; ++j) {
    const std::int32_t v = decode(k, offsets_.get(j));
    if (v != kMissing) offsets_.put(j, static_cast<std::uint16_t>(v - base));
    // A missing value held as an offset (it was inside the old window) becomes kNone.
    else if (offsets_.get(j) != kNone)
      offsets_.put(j, kNone);
  }
  k.base = base;
  return true;
}

void DigitColumn::put_wide(std::size_t b, std::size_t i, std::int32_t d) {
  Block& k = blocks_[b];
  // As far as the block was written (a short column's only block stays short).
  const std::size_t first = b * kBlock, end = std::min(size_, first + kBlock);
  std::vector<std::int32_t> values(end - first);
  for (std::size_t j = first; j < end; ++j) values[j - first] = decode(k, offsets_.get(j));
  values[i - first] = d;
  k.state = static_cast<std::int32_t>(wide_.size());
  wide_.push_back(std::move(values));
  if (wide_.size() >= kWideBlocksBeforePlain && wide_.size() * 8 > blocks_.size()) to_plain();
}

void DigitColumn::to_plain() {
  for (std::size_t i = 0; i < size_; ++i) plain_.put(i, get(i));  // reads the offsets still
  offsets_.clear();
  blocks_ = std::vector<Block>();  // not = {}, which keeps the capacity
  wide_ = std::vector<std::vector<std::int32_t>>();
  narrow_ = false;
}

}  // namespace mfu::detail
