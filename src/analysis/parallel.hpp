#pragma once
// Passes over the records split across threads. A pass cuts [0, n) into ranges of whole blocks
// and runs one range per thread; what it computes is merged in range order. Only results that
// do not depend on where the cuts fall are computed this way (counts, flags, histograms, the
// first few of something in record order, sums of integers): an analysis gives the same
// numbers on one thread as on eight, which tests/unit/test_parallel_analysis.cpp checks.
#include <algorithm>
#include <cstddef>
#include <exception>
#include <future>
#include <thread>
#include <vector>

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

struct PartRange {
  std::size_t lo = 0, hi = 0;
};

/// [0, n) cut into at most `threads` ranges of whole blocks (the last may be shorter), in order;
/// one range when n is at most one block, none when n is 0.
[[nodiscard]] inline std::vector<PartRange> parts_of(std::size_t n, unsigned threads) {
  std::vector<PartRange> parts;
  if (n == 0) return parts;
  const std::size_t blocks = (n + kParallelBlock - 1) / kParallelBlock;
  const std::size_t k = blocks < 2 ? 1 : std::min<std::size_t>(std::max(1u, threads), blocks);
  for (std::size_t p = 0, lo = 0; p < k; ++p) {
    const std::size_t hi = p + 1 == k ? n : std::min(n, (blocks * (p + 1) / k) * kParallelBlock);
    parts.push_back({lo, hi});
    lo = hi;
  }
  return parts;
}

/// Calls f(part, lo, hi) for each range, the first on the calling thread and each other on a
/// thread of its own, and waits for all. An exception of a part is rethrown after all have
/// ended (the first in part order), so none outlives what it reads.
///
/// A part counts into a result of its own on its thread's stack and stores it when it is done,
/// never into an element of a vector of per-part results on every record: elements next to one
/// another share a cache line, which then moves between the cores on each write (false sharing;
/// in the parsers it took 10-20% of a native analysis, see IterationTable::Impl).
template <class F>
void run_parts(const std::vector<PartRange>& parts, F&& f) {
  if (parts.empty()) return;
  std::vector<std::future<void>> others;
  others.reserve(parts.size() - 1);
  for (std::size_t p = 1; p < parts.size(); ++p)
    others.push_back(
        std::async(std::launch::async, [&f, &parts, p] { f(p, parts[p].lo, parts[p].hi); }));
  std::exception_ptr first;
  try {
    f(std::size_t{0}, parts[0].lo, parts[0].hi);
  } catch (...) {
    first = std::current_exception();
  }
  for (auto& o : others) {
    try {
      o.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace mfu::detail
