#pragma once
// Line-level helpers shared by the text-log parsers: timestamps in the formats frameworks
// print, rank prefixes, key/value fields, and the phase timers of Megatron and DeepSpeed.

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "io/timestamp.hpp"
#include "mfu/run.hpp"
#include "text.hpp"

namespace mfu::detail {

/// Format evidence from the lines of a head: the sum of `weight(line)` over its lines and
/// their '\r' segments (tqdm redraws), each trimmed; stops once past 100, which is plenty to
/// choose a format.
template <class Weight>
double score_lines(std::string_view head, Weight&& weight) {
  double score = 0;
  std::size_t pos = 0;
  while (pos < head.size() && score <= 100) {
    // The next '\n', then a '\r' before it: two memchr a line (find_first_of over a set of
    // two calls memchr once a byte, 1.5 ms a MiB, in every sniffer).
    std::size_t end = head.find('\n', pos);
    if (end == std::string_view::npos) end = head.size();
    end = std::min(end, head.substr(0, end).find('\r', pos));
    score += weight(trim(head.substr(pos, end - pos)));
    pos = end + 1;
  }
  return score;
}

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
