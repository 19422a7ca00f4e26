#pragma once
// Passes over the records split across threads. A pass cuts [0, n) into ranges of whole blocks
// that its threads take in turn; what it computes is merged in range order. Only results that
// do not depend on where the cuts fall are computed this way (counts, flags, histograms, the
// first few of something in record order, sums of integers): an analysis gives the same
// numbers on one thread as on eight, which tests/unit/test_parallel_analysis.cpp checks.
#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

#include "work_queue.hpp"

namespace mfu::detail {

/// Records per block of a parallel pass: a pass over one block runs on the calling thread.
/// 2^16 records are ~100 microseconds of the cheapest pass, so a thread's start is paid back
/// (a judgement from the 1 GiB benchmark file, not a published figure).
inline constexpr std::size_t kParallelBlock = std::size_t{1} << 16;

/// Threads a pass may use: `requested`, or the machine's cores when 0; at most 8.
[[nodiscard]] inline unsigned pass_threads(unsigned requested) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp(requested ? requested : hw, 1u, 8u);
}

/// Parts per thread of a pass with little to merge per part (the walk, read_records, the
/// outliers, the timestamps): the threads take the parts in turn as each finishes one, so that a
/// thread that runs slower (a virtual CPU the host lends elsewhere) takes fewer records instead
/// of keeping the others waiting at the end. With one part per thread, the walk over a 1 GiB
/// native log ran on one thread alone for its last 0.1 s of 0.47 s (perf timeline, 2-vCPU VM).
/// Passes that keep a histogram per part stay at one part a thread: four made find_steady 7-10%
/// slower on one core (BM_Stage/steady_*). Four is a judgement, not tuned: a part is then at
/// most an eighth of a pass on two threads, and the passes were no slower on one core.
inline constexpr unsigned kPartsPerThread = 4;

struct PartRange {
  std::size_t lo = 0, hi = 0;
};

/// The ranges a pass cuts [0, n) into, in order, and the threads that take them.
struct Parts {
  std::vector<PartRange> ranges;
  unsigned threads = 1;
  [[nodiscard]] std::size_t size() const { return ranges.size(); }
  [[nodiscard]] bool empty() const { return ranges.empty(); }
  [[nodiscard]] const PartRange& operator[](std::size_t p) const { return ranges[p]; }
  [[nodiscard]] auto begin() const { return ranges.begin(); }
  [[nodiscard]] auto end() const { return ranges.end(); }
};

/// [0, n) cut into ranges of whole blocks (the last may be shorter), in order: `per_thread` for
/// each of `threads` threads, but one on one thread, and never more than the blocks; one range
/// when n is at most one block, none when n is 0.
[[nodiscard]] inline Parts parts_of(std::size_t n, unsigned threads, unsigned per_thread = 1) {
  Parts parts;
  parts.threads = std::max(1u, threads);
  if (n == 0) return parts;
  const std::size_t blocks = (n + kParallelBlock - 1) / kParallelBlock;
  const std::size_t wanted =
      parts.threads == 1 ? 1 : std::size_t{parts.threads} * std::max(1u, per_thread);
  const std::size_t k = blocks < 2 ? 1 : std::min(wanted, blocks);
  for (std::size_t p = 0, lo = 0; p < k; ++p) {
    const std::size_t hi = p + 1 == k ? n : std::min(n, (blocks * (p + 1) / k) * kParallelBlock);
    parts.ranges.push_back({lo, hi});
    lo = hi;
  }
  return parts;
}

/// Calls f(part, lo, hi) for each range on `parts.threads` threads taking them in turn
/// (run_in_turn), and waits for all; what a part computes is merged in part order. An exception
/// of a part is rethrown after all have ended (the first in part order).
///
/// A part counts into a result of its own on its thread's stack and stores it when it is done,
/// never into an element of a vector of per-part results on every record: elements next to one
/// another share a cache line, which then moves between the cores on each write (false sharing;
/// in the parsers it took 10-20% of a native analysis, see IterationTable::Impl).
template <class F>
void run_parts(const Parts& parts, F&& f) {
  run_in_turn(parts.size(), parts.threads, [&](std::size_t p) { f(p, parts[p].lo, parts[p].hi); });
}

}  // namespace mfu::detail
