#pragma once
// TFRecord framing, the container of TensorBoard event files
// (tensorflow/core/lib/io/record_writer.cc): each record is
//   uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes |
//   length bytes of data        | uint32 masked CRC-32C of the data
// Records are read one at a time from a byte source; the checksums are checked.

#include <cstdint>
#include <string>
#include <string_view>

#include "io/source.hpp"

namespace mfu::detail {

/// True when `head` starts with a TFRecord header whose length checksum holds.
[[nodiscard]] bool looks_like_tfrecord(std::string_view head);

class TfRecordReader {
 public:
  explicit TfRecordReader(ByteSource& src) : src_(src) {}

  enum class Status { kRecord, kEnd, kCorruptLength, kCorruptData, kCutOff };

  /// Reads the next record into `data`. kCorruptData: the record was read but its data does not
  /// match its checksum (it can be skipped); kCorruptLength: the framing is lost (stop there);
  /// kCutOff: the file ends inside a record.
  Status next(std::string& data);

  [[nodiscard]] std::uint64_t offset() const { return offset_; }        ///< bytes read so far
  [[nodiscard]] std::uint64_t record_offset() const { return start_; }  ///< of the last record
  [[nodiscard]] std::uint64_t records() const { return records_; }

  /// Records larger than this are framing errors, not data (event files hold small records).
  static constexpr std::uint64_t kMaxRecord = std::uint64_t{256} << 20;

 private:
  bool read_exactly(char* buf, std::size_t n);

  ByteSource& src_;
  std::uint64_t offset_ = 0, start_ = 0, records_ = 0;
};

}  // namespace mfu::detail
