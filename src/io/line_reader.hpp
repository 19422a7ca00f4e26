#pragma once
// Splits a byte stream into lines without copying them. "\r\n" and "\n" end a line; a bare
// "\r" (tqdm progress bars redrawing) splits a line into segments that are returned one by one
// with the same line number. Lines longer than the limit are skipped and counted, so a single
// 200 MB line cannot exhaust memory.

#include <cstdint>
#include <string_view>
#include <vector>

#include "io/source.hpp"

namespace mfu::detail {

/// Bytes readable after the end of every returned line (simdjson needs 64).
inline constexpr std::size_t kLinePadding = 64;
/// Longest line kept; longer ones are skipped and counted.
inline constexpr std::size_t kMaxLineBytes = std::size_t{16} << 20;

class LineReader {
 public:
  explicit LineReader(ByteSource& source, std::size_t max_line = kMaxLineBytes);

  /// The next line or segment, without terminators; false at the end of the input.
  bool next(std::string_view& line);
  /// Numbers the next line `n` (for a reader that starts inside a file).
  void set_next_line(std::uint64_t n) { line_no_ = n - 1; }
  /// 1-based number of the line last returned.
  [[nodiscard]] std::uint64_t line_number() const { return line_no_; }
  [[nodiscard]] std::uint64_t bytes_read() const { return bytes_; }
  [[nodiscard]] std::uint64_t oversized_lines() const { return oversized_; }
  /// Line number of the first oversized line (0 when none).
  [[nodiscard]] std::uint64_t first_oversized_line() const { return first_oversized_; }
  /// True when the input did not end with a newline (a cut-off last line).
  [[nodiscard]] bool unterminated_last_line() const { return unterminated_; }
  /// Whether the line last returned may hold an escape byte (0x1B: ANSI colours); false only
  /// when it certainly holds none, so a line cleaner can skip its own search.
  [[nodiscard]] bool may_have_escape() const { return line_has_escape_; }

 private:
  /// Where the next copy of one byte is in the buffer. It is looked for once over all that is
  /// buffered and kept until a line passes it: carriage returns and escape bytes are rare, and
  /// a search of every line for each was two library calls a line (without them `mfu analyze`
  /// of the 1 GiB native and Megatron logs took 2-3% less time, tests/bench/alternate.sh).
  struct NextByte {
    char byte;
    std::size_t at = 0;       ///< index of the byte, or == scanned when none before `scanned`
    std::size_t scanned = 0;  ///< where the last search stopped (the end of the buffered bytes)
    /// Whether the byte is in buf[from, to), to <= end; `from` never goes back between calls
    /// (reset() after the buffer moves).
    bool in(const char* buf, std::size_t from, std::size_t to, std::size_t end);
    void reset() { at = scanned = 0; }
  };

  bool fill();
  bool next_physical(std::string_view& line);

  ByteSource& src_;
  std::size_t max_line_;
  std::vector<char> buf_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  std::uint64_t line_no_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t oversized_ = 0;
  std::uint64_t first_oversized_ = 0;
  bool unterminated_ = false;
  std::string_view pending_;  // remaining \r segments of the current physical line
  bool has_pending_ = false;
  NextByte next_cr_{'\r'};
  NextByte next_escape_{'\x1b'};
  bool line_has_escape_ = true;
};

}  // namespace mfu::detail
