// TFRecord framing (see tfrecord.hpp).
#include "ingest/tfrecord.hpp"

#include <cstring>

#include "io/crc32c.hpp"

namespace mfu::detail {
namespace {

std::uint64_t le64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::uint32_t le32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

bool looks_like_tfrecord(std::string_view head) {
  if (head.size() < 12) return false;
  return masked_crc32c(head.substr(0, 8)) == le32(head.data() + 8) &&
         le64(head.data()) <= TfRecordReader::kMaxRecord;
}

bool TfRecordReader::read_exactly(char* buf, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const std::size_t r = src_.read(buf + got, n - got);
    if (r == 0) break;
    got += r;
  }
  offset_ += got;
  return got == n;
}

TfRecordReader::Status TfRecordReader::next(std::string& data) {
  start_ = offset_;
  char header[12];
  const std::uint64_t before = offset_;
  if (!read_exactly(header, sizeof header))
    return offset_ == before ? Status::kEnd : Status::kCutOff;
  if (masked_crc32c(std::string_view(header, 8)) != le32(header + 8)) return Status::kCorruptLength;
  const std::uint64_t length = le64(header);
  if (length > kMaxRecord) return Status::kCorruptLength;
  data.resize(static_cast<std::size_t>(length));
  char footer[4];
  if (!read_exactly(data.data(), data.size()) || !read_exactly(footer, sizeof footer))
    return Status::kCutOff;
  ++records_;
  return masked_crc32c(data) == le32(footer) ? Status::kRecord : Status::kCorruptData;
}

}  // namespace mfu::detail
