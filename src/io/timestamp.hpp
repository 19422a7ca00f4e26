#pragma once
// Wall-clock timestamps as training logs print them. Two readers: find_timestamp() looks for a
// date anywhere near the start of a line (a format's own field, "[titan] 2025-01-01 ..."), and
// read_timestamp_prefix() reads one only where a line starts (the line layer's prefix peeling).

#include <cstddef>
#include <string_view>

namespace mfu::detail {

/// Seconds since 1970 for a civil UTC date and time.
[[nodiscard]] double unix_seconds(int year, int month, int day, int hour, int minute,
                                  double second);

/// Finds a wall-clock timestamp near the start of `line`: "[2024-03-30 20:02:40]",
/// "[2026-08-22 15:22:22.123456]", "[2022-10-28 23:48:58,641]", "2026-04-18 22:15:40,200",
/// or absl's "I0811 21:54:55.531340". Year-less absl times are returned as seconds into 1970
/// (below kYearlessLimit) and placed in the year of the log's dated lines by
/// resolve_yearless_timestamps(). Returns NaN when there is none.
[[nodiscard]] double find_timestamp(std::string_view line);

/// Timestamps below this are year-less (absl/glog "MMDD HH:MM:SS").
inline constexpr double kYearlessLimit = 4e7;

/// A timestamp that starts `s` exactly, in one of the forms of the prefix grammar
/// (src/io/line_prefix.hpp): ISO 8601 with an optional zone ("2024-03-30T20:02:40.5Z",
/// "+02:00" is converted to UTC), "YYYY-MM-DD HH:MM:SS[,.]fff", "YYYY/MM/DD HH:MM:SS",
/// "MM/DD/YYYY HH:MM:SS" (transformers' logging), and glog/absl "I1201 12:00:00.123456" with
/// its thread id and "file.py:12]". It must be followed by the end, a space, or ']'. Sets
/// `length` to the characters read. NaN when `s` does not start with one.
[[nodiscard]] double read_timestamp_prefix(std::string_view s, std::size_t& length);

}  // namespace mfu::detail
