#include "io/line_reader.hpp"

#include <algorithm>
#include <cstring>

namespace mfu::detail {

namespace {
constexpr std::size_t kBlock = std::size_t{4} << 20;
}

LineReader::LineReader(ByteSource& source, std::size_t max_line)
    : src_(source), max_line_(max_line) {
  // Small inputs get a small buffer; it grows (doubling) up to kBlock, or beyond for a long line.
  const std::uint64_t hint = source.size_hint();
  const std::size_t first =
      hint > 0 ? static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, hint + 1))
               : std::size_t{64} << 10;
  buf_.resize(std::max<std::size_t>(first, 4096) + kLinePadding);
}

bool LineReader::NextByte::in(const char* buf, std::size_t from, std::size_t to, std::size_t end) {
  // Search again when the byte found is behind the line, or when none was found in what was
  // searched and the line reaches past it.
  if (at < from || (at == scanned && scanned < to)) {
    const std::size_t start = std::max(from, at < from ? from : scanned);
    const void* p = std::memchr(buf + start, byte, end - start);
    at = p != nullptr ? static_cast<std::size_t>(static_cast<const char*>(p) - buf) : end;
    scanned = end;
  }
  return at < to;
}

bool LineReader::fill() {
  if (eof_) return false;
  next_cr_.reset();  // the buffer moves or grows: its positions are searched again
  next_escape_.reset();
  // Move the partial line to the front, grow the buffer if a line is longer than it.
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  const std::size_t cap = buf_.size() - kLinePadding;
  if (end_ + cap / 4 > cap) {
    // Less than a quarter free: double (a long line, or a stream larger than the first guess).
    buf_.resize(std::max(cap * 2, end_ + std::min(cap, kBlock)) + kLinePadding);
  }
  const std::size_t got = src_.read(buf_.data() + end_, buf_.size() - end_ - kLinePadding);
  if (got == 0) {
    eof_ = true;
    return false;
  }
  bytes_ += got;
  end_ += got;
  return true;
}

bool LineReader::next_physical(std::string_view& line) {
  for (;;) {
    const char* start = buf_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    if (nl != nullptr) {
      const std::size_t len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
      begin_ += len + 1;
      ++line_no_;
      if (len > max_line_) {
        ++oversized_;
        if (first_oversized_ == 0) first_oversized_ = line_no_;
        continue;
      }
      line = std::string_view(start, len);
      return true;
    }
    if (end_ - begin_ > max_line_) {
      // Too long: drop bytes until the next newline without keeping them.
      ++line_no_;
      ++oversized_;
      if (first_oversized_ == 0) first_oversized_ = line_no_;
      begin_ = end_ = 0;
      for (;;) {
        if (!fill()) return false;
        const void* p = std::memchr(buf_.data(), '\n', end_);
        if (p != nullptr) {
          begin_ = static_cast<std::size_t>(static_cast<const char*>(p) - buf_.data()) + 1;
          break;
        }
        begin_ = end_ = 0;
      }
      continue;
    }
    if (!fill()) {
      if (end_ > begin_) {
        line = std::string_view(buf_.data() + begin_, end_ - begin_);
        begin_ = end_;
        ++line_no_;
        unterminated_ = true;
        return true;
      }
      return false;
    }
  }
}

bool LineReader::next(std::string_view& line) {
  for (;;) {
    if (!has_pending_) {
      std::string_view phys;
      if (!next_physical(phys)) return false;
      if (!phys.empty() && phys.back() == '\r') phys.remove_suffix(1);
      const auto from = static_cast<std::size_t>(phys.data() - buf_.data());
      line_has_escape_ = next_escape_.in(buf_.data(), from, from + phys.size(), end_);
      if (!next_cr_.in(buf_.data(), from, from + phys.size(), end_)) {
        line = phys;
        return true;
      }
      pending_ = phys;
      has_pending_ = true;
    }
    const std::size_t cr = pending_.find('\r');
    if (cr == std::string_view::npos) {
      line = pending_;
      has_pending_ = false;
      return true;
    }
    line = pending_.substr(0, cr);
    pending_.remove_prefix(cr + 1);
    if (line.empty()) continue;
    return true;
  }
}

}  // namespace mfu::detail
