// Order statistics: one quantile rule for weighted and unweighted values, checked by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "analysis/stats.hpp"

using namespace mfu::detail;

// Position q*n - 0.5 between order statistics (0-based), clamped to the ends:
//   {10,20,30,40,50}, q=0.25: p = 1.25 - 0.5 = 0.75 -> 10 + 0.75 * (20 - 10) = 17.5
//   q=0.95: p = 4.25 >= n-1 = 4 -> the maximum, 50;  q=0.05: p = -0.25 -> the minimum, 10
//   {4,1,3,2} (unsorted), q=0.5: p = 1.5 -> 2 + 0.5 * (3 - 2) = 2.5, the usual even median
TEST(Quantile, UnweightedValuesByHand) {
  EXPECT_DOUBLE_EQ(quantile_of({50, 10, 40, 20, 30}, 0.25), 17.5);
  EXPECT_DOUBLE_EQ(quantile_of({50, 10, 40, 20, 30}, 0.95), 50.0);
  EXPECT_DOUBLE_EQ(quantile_of({50, 10, 40, 20, 30}, 0.05), 10.0);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({7, 1, 3}), 3.0);
  EXPECT_DOUBLE_EQ(median_of({7}), 7.0);
  EXPECT_TRUE(std::isnan(median_of({})));
}

// The unweighted rule agrees with the weighted one at equal weights, and the weighted one at
// unequal weights is a different number: {1 (weight 3), 2 (weight 1)} has its median inside
// the weight of 1. Spans' midpoints: 1 at 1.5, 2 at 3.5; target 2.0 -> 1 + (0.5/2) * 1 = 1.25.
TEST(Quantile, EqualWeightsAgreeWithTheUnweightedRule) {
  const std::vector<double> v{3, 9, 1, 7, 5, 2};
  for (double q : {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0}) {
    std::vector<Weighted> w;
    for (double x : v) w.push_back({x, 2.0});
    EXPECT_DOUBLE_EQ(weighted_quantile(w, q), quantile_of(v, q)) << q;
  }
  std::vector<Weighted> skewed{{1, 3}, {2, 1}};
  EXPECT_DOUBLE_EQ(weighted_quantile(skewed, 0.5), 1.25);
}
