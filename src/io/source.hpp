#pragma once
// Byte sources: plain files, stdin, gzip and zstd streams (detected by their magic bytes, not
// the file name), and memory. All stream in blocks; none holds the whole input.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace mfu::detail {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Reads up to `n` bytes into `buf`; returns 0 at the end. Throws mfu::Error on a read error
  /// or corrupt compressed data.
  virtual std::size_t read(char* buf, std::size_t n) = 0;
  /// True when a compressed stream ended before its end marker (a cut-off file).
  [[nodiscard]] virtual bool truncated() const { return false; }
  /// "plain", "gzip" or "zstd".
  [[nodiscard]] virtual const char* encoding() const { return "plain"; }
  /// Size of the underlying file in bytes when known (0 otherwise).
  [[nodiscard]] virtual std::uint64_t size_hint() const { return 0; }
};

/// Reads from `src` until `n` bytes are in `buf` or the source ends; returns how many.
std::size_t read_fully(ByteSource& src, char* buf, std::size_t n);

/// Opens `path` ("-" = stdin) and wraps a decompressor when the content is gzip or zstd.
/// Throws mfu::Error naming the file when it cannot be opened.
[[nodiscard]] std::unique_ptr<ByteSource> open_source(const std::string& path);

/// Bytes [begin, end) of a plain file, read with pread (for parsing ranges in parallel).
[[nodiscard]] std::unique_ptr<ByteSource> open_file_range(const std::string& path,
                                                          std::uint64_t begin, std::uint64_t end);

/// Size of `path` when it is a regular, uncompressed file (no gzip/zstd magic); 0 otherwise.
[[nodiscard]] std::uint64_t plain_file_size(const std::string& path);

/// A source over bytes in memory (also decompressed when they are gzip or zstd).
[[nodiscard]] std::unique_ptr<ByteSource> memory_source(std::string_view bytes);

/// Replays `prefix` (bytes already read from `inner`), then continues with `inner`.
[[nodiscard]] std::unique_ptr<ByteSource> with_prefix(std::unique_ptr<ByteSource> inner,
                                                      std::string prefix);

/// Reads the whole source, refusing more than `limit` bytes (mfu::Error).
[[nodiscard]] std::string read_all(ByteSource& src, std::size_t limit, const std::string& name);

}  // namespace mfu::detail
