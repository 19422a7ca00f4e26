#pragma once
// Line-level helpers shared by the text-log parsers: timestamps in the formats frameworks
// print, rank prefixes, key/value fields, and the phase timers of Megatron and DeepSpeed.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "mfu/run.hpp"

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

/// Moves year-less timestamps into the year of the dated ones (or keeps them as they are when
/// the log has no dated line), so that first/last and gaps are consistent.
void resolve_yearless_timestamps(Run& run, double first_yearless, double last_yearless);

/// Rank printed as a prefix: "[rank3]:", "[Rank 3]", "rank=3". -1 when none.
[[nodiscard]] std::int32_t find_rank(std::string_view line);

/// Accumulates named timers (seconds) from Megatron and DeepSpeed timer lines and resolves
/// them into exclusive phases: parents and children are not double counted (Megatron's
/// batch-generator runs inside forward-compute; DeepSpeed's backward includes its allreduce).
class TimerSet {
 public:
  void add(std::string_view name, double seconds);
  [[nodiscard]] bool empty() const { return timers_.empty(); }
  void clear() { timers_.clear(); }
  /// Writes the phases it can resolve into `it` (only phases it knows).
  void apply(Iteration& it) const;
  /// Names seen, for startup-only timers such as load-checkpoint.
  [[nodiscard]] const std::map<std::string, double>& raw() const { return timers_; }

 private:
  [[nodiscard]] std::optional<double> get(std::initializer_list<const char*> names) const;
  std::map<std::string, double> timers_;
};

}  // namespace mfu::detail
