// A host name before a local-rank tag ("worker-1: [default3]:", pdsh or a launcher in front of
// torchrun --tee) numbers the node: two hosts of two local ranks are four ranks, not two. By
// hand: hosts in name order are nodes 0..N-1 only where their numbers are small; otherwise the
// count of distinct ranks is what matters (the check against the GPU count reads it).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "mfu/ingest.hpp"

namespace mfu {
namespace {

std::string two_nodes(const std::string& host_a, const std::string& host_b) {
  std::string text;
  for (int step = 1; step <= 6; ++step)
    for (const auto* host : {&host_a, &host_b})
      for (int local = 0; local < 2; ++local)
        text += fmt::format("{}: [default{}]:step {} | step_time {:.3f} s | loss 2.0\n", *host,
                            local, step, 1.0 + 0.001 * local);
  return text;
}

std::vector<std::int32_t> sorted_ranks(const mfu::Run& r) {
  std::vector<std::int32_t> ranks = r.ranks;
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

TEST(HostNodes, AHostNameBeforeALocalRankTagNumbersTheNode) {
  // worker-1 and worker-2: nodes 1 and 2 of 2 local ranks -> ranks 2, 3, 4, 5.
  const mfu::Run named = ingest_text(two_nodes("worker-1", "worker-2"), "job.log");
  EXPECT_EQ(sorted_ranks(named), (std::vector<std::int32_t>{2, 3, 4, 5}));
  // IP-like names fold to large node numbers, renumbered 1..N in that order: four ranks.
  const mfu::Run ip =
      ingest_text(two_nodes("ip-10-0-0-1.ec2.internal", "ip-10-0-1-1.ec2.internal"), "job.log");
  EXPECT_EQ(ip.ranks.size(), 4u);
  for (const auto r : ip.ranks) EXPECT_LT(r, 16) << r;
  // The check can fail: one host name for both nodes makes them the same two ranks.
  const mfu::Run same = ingest_text(two_nodes("worker-1", "worker-1"), "job.log");
  EXPECT_EQ(same.ranks.size(), 2u);
}

}  // namespace
}  // namespace mfu
