// The straggler-free step time from matched collectives (trace.hpp, project_no_stragglers).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "mfu/error.hpp"
#include "mfu/trace.hpp"

namespace mfu {
namespace {

/// How far the last arrival is ahead of the median one (the middle, or halfway between the
/// two middle ones), in seconds. Absolute nanoseconds exceed a double's exact range (2^53):
/// differences are taken in integers first.
double last_ahead_of_median_s(std::vector<std::int64_t> starts) {
  std::sort(starts.begin(), starts.end());
  const std::size_t n = starts.size();
  const std::int64_t last = starts.back();
  const double behind = n % 2 ? static_cast<double>(last - starts[n / 2])
                              : 0.5 * static_cast<double>(last - starts[n / 2 - 1]) +
                                    0.5 * static_cast<double>(last - starts[n / 2]);
  return behind * 1e-9;
}

}  // namespace

StragglerProjection project_no_stragglers(const TraceSummary& t) {
  if (t.ranks.size() < 2)
    throw Error(fmt::format("the straggler-free what-if needs the traces of at least two ranks; "
                            "the input holds {}",
                            t.ranks.size()),
                "pass every rank's trace (a directory of them)");
  std::map<std::string, std::vector<std::pair<std::size_t, const CollectiveCall*>>> by_key;
  for (std::size_t r = 0; r < t.ranks.size(); ++r)
    for (const auto& c : t.ranks[r].collectives) by_key[c.key].emplace_back(r, &c);
  StragglerProjection p;
  std::map<std::int64_t, double> saving;  // per step
  std::map<int, StragglerCost> cost;
  for (const auto& [key, calls] : by_key) {
    if (calls.size() < 2) continue;
    ++p.matched_collectives;
    std::vector<std::int64_t> starts;
    const CollectiveCall* last = calls.front().second;
    std::size_t last_rank = calls.front().first;
    for (const auto& [r, c] : calls) {
      starts.push_back(c->start_ns);
      if (c->start_ns > last->start_ns) {
        last = c;
        last_rank = r;
      }
    }
    const double lead_s = last_ahead_of_median_s(starts);
    if (!(lead_s > 0)) continue;
    saving[last->step] += lead_s;
    auto& c = cost[t.ranks[last_rank].rank];
    c.rank = t.ranks[last_rank].rank;
    c.seconds += lead_s;
    ++c.collectives;
  }
  if (p.matched_collectives == 0)
    throw Error("no collective is seen on two ranks: nothing to project",
                "pass the traces of ranks of the same job, with their communication kernels");
  std::map<std::int64_t, double> slowest;
  for (const auto& r : t.ranks)
    for (const auto& s : r.steps) slowest[s.step] = std::max(slowest[s.step], s.wall_s);
  for (const auto& [step, now] : slowest) {
    const double projected = std::max(0.0, now - saving[step]);
    p.steps.push_back({step, now, projected});
    p.now_s += now;
    p.projected_s += projected;
  }
  if (!p.steps.empty()) {
    p.now_s /= static_cast<double>(p.steps.size());
    p.projected_s /= static_cast<double>(p.steps.size());
  }
  for (auto& [rank, c] : cost) p.costs.push_back(c);
  std::sort(p.costs.begin(), p.costs.end(),
            [](const StragglerCost& a, const StragglerCost& b) { return a.seconds > b.seconds; });
  return p;
}

}  // namespace mfu
