// The rare paths of NarrowColumn (src/narrow_column.hpp): the move from a rule to blocks, a
// block's first value, a base that moves, a block or the whole column turning into plain values.
#include "narrow_column.hpp"

namespace mfu::detail {

template <class T>
void NarrowColumn<T>::to_blocks() {
  const Column<T> rule = std::move(whole_);
  whole_ = Column<T>(fill_);
  form_ = Form::kBlocks;
  const std::size_t n = size_;
  size_ = 0;
  rule.read(0, n, [&](std::size_t i, T v) {
    if (v != fill_) put(i, v);
  });
  size_ = n;
}

template <class T>
void NarrowColumn<T>::put_rare(std::size_t i, T v) {
  const std::size_t b = i / kBlock;
  if (b >= blocks_.size()) blocks_.resize(b + 1);
  Block& k = blocks_[b];
  if (k.state >= 0) {
    put_in_wide(k, i % kBlock, v);
    return;
  }
  if (v == fill_) {
    offsets_.put(i, kNone);
    return;
  }
  if (k.state == kEmpty) {
    k.base = offset(kMaxOffset / 2, v);  // v - 32767: room on both sides
    k.state = kNarrow;
  } else if (!rebase(b, v)) {
    put_wide(b, i, v);
    return;
  }
  offsets_.put(i, static_cast<std::uint16_t>(offset(k.base, v)));
}

template <class T>
void NarrowColumn<T>::put_in_wide(const Block& k, std::size_t j, T v) {
  auto& w = wide_[static_cast<std::size_t>(k.state)];
  if (j >= w.size()) {
    if (j >= w.capacity()) w.reserve(std::min(kBlock, std::max(2 * w.capacity(), j + 1)));
    w.resize(j + 1, fill_);
  }
  w[j] = v;
}

template <class T>
bool NarrowColumn<T>::rebase(std::size_t b, T v) {
  Block& k = blocks_[b];
  const std::size_t first = b * kBlock, end = std::min(size_, first + kBlock);
  std::int64_t lo = v, hi = v;
  for (std::size_t j = first; j < end; ++j) {
    const T x = decode(k, offsets_.get(j));
    if (x == fill_) continue;
    lo = std::min<std::int64_t>(lo, x);
    hi = std::max<std::int64_t>(hi, x);
  }
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  if (span > kMaxOffset) return false;
  const std::uint64_t base = static_cast<std::uint64_t>(lo) - (kMaxOffset - span) / 2;
  for (std::size_t j = first; j < end; ++j) {
    const T x = decode(k, offsets_.get(j));
    if (x != fill_) offsets_.put(j, static_cast<std::uint16_t>(offset(base, x)));
    // A missing value held as an offset (it was inside the old window) becomes kNone.
    else if (offsets_.get(j) != kNone)
      offsets_.put(j, kNone);
  }
  k.base = base;
  return true;
}

template <class T>
void NarrowColumn<T>::put_wide(std::size_t b, std::size_t i, T v) {
  Block& k = blocks_[b];
  // As far as the block was written (a short column's only block stays short).
  const std::size_t first = b * kBlock, end = std::min(size_, first + kBlock);
  std::vector<T> values(end - first);
  for (std::size_t j = first; j < end; ++j) values[j - first] = decode(k, offsets_.get(j));
  values[i - first] = v;
  k.state = static_cast<std::int32_t>(wide_.size());
  wide_.push_back(std::move(values));
  if (wide_.size() >= kWideBlocksBeforePlain && wide_.size() * 8 > blocks_.size()) to_plain();
}

template <class T>
void NarrowColumn<T>::to_plain() {
  Column<T> plain(fill_);
  plain.reserve(reserved_);
  for (std::size_t i = 0; i < size_; ++i) plain.put(i, get(i));  // reads the blocks still
  whole_ = std::move(plain);
  offsets_.clear();
  blocks_ = std::vector<Block>();  // not = {}, which keeps the capacity
  wide_ = std::vector<std::vector<T>>();
  form_ = Form::kPlain;
}

template class NarrowColumn<std::int32_t>;
template class NarrowColumn<std::int64_t>;

}  // namespace mfu::detail
