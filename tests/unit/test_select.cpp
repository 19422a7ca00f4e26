// Exact selection without a buffer (analysis/select.hpp), checked against a second code path:
// the k-th element of a sorted copy, and distribution() over a buffer of Weighted values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "analysis/select.hpp"
#include "analysis/stats.hpp"

using namespace mfu::detail;
using mfu::Distribution;

namespace {

auto source_of(const std::vector<double>& v) {
  return [&v](auto&& f) {
    for (double x : v) f(x);
  };
}

std::uint64_t bits(double v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

/// Classes of inputs the selection must handle: step times clustered tighter than 1/65536 of
/// their range (one slow stall widens the range), many duplicates (times printed to 3 digits),
/// values spread over hundreds of binary orders of magnitude, negative values and zeros of both
/// signs, and a run of a single repeated value.
std::vector<double> generated(int kind, std::size_t n, std::mt19937_64& rng) {
  std::vector<double> v(n);
  std::normal_distribution<double> noise(1.0, 1e-4);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0: v[i] = noise(rng); break;
      case 1: v[i] = std::round(noise(rng) * 1000) / 1000; break;
      case 2: v[i] = std::pow(10.0, -300 + 600 * unit(rng)); break;
      case 3: v[i] = (unit(rng) < 0.1) ? (unit(rng) < 0.5 ? 0.0 : -0.0) : noise(rng) - 1.0; break;
      default: v[i] = 0.25; break;
    }
  }
  if (kind == 0 && n > 10) v[n / 3] = 600.0;  // a checkpoint stall
  return v;
}

}  // namespace

TEST(Select, OrderKeysSortLikeTheValues) {
  const std::vector<double> v{-1e300, -2.5, -1e-300, 0.0, 1e-310, 1e-300, 1.0, 2.5, 1e300};
  for (std::size_t i = 1; i < v.size(); ++i) {
    EXPECT_LT(order_key(v[i - 1]), order_key(v[i])) << v[i];
    EXPECT_EQ(bits(from_order_key(order_key(v[i]))), bits(v[i]));
  }
  EXPECT_EQ(order_key(-0.0), order_key(0.0));
}

TEST(Select, EveryRankIsTheSortedCopysElement) {
  std::mt19937_64 rng(7);
  for (int kind = 0; kind < 5; ++kind) {
    for (std::size_t n : {1u, 2u, 3u, 100u, 5000u, 200000u}) {
      const std::vector<double> v = generated(kind, n, rng);
      std::vector<double> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      std::vector<std::size_t> ranks{0, n / 2, n - 1, n / 20, (n * 19) / 20};
      const auto got = select_ranks(source_of(v), ranks, sorted.front(), sorted.back());
      for (std::size_t j = 0; j < ranks.size(); ++j)
        EXPECT_EQ(got[j], sorted[ranks[j]])
            << "kind " << kind << " n " << n << " rank " << ranks[j];
    }
  }
}

// The analysis' numbers from passes over the records equal those from a buffer of weighted
// values bit for bit (median, tails, MAD, mean), for each class of input and weight.
TEST(Select, TheDistributionEqualsTheBufferedOneBitForBit) {
  std::mt19937_64 rng(11);
  for (int kind = 0; kind < 5; ++kind) {
    for (std::size_t n : {1u, 2u, 7u, 1000u, 100000u}) {
      for (double weight : {1.0, 10.0}) {
        const std::vector<double> v = generated(kind, n, rng);
        std::vector<Weighted> w;
        for (double x : v) w.push_back({x, weight});
        const Distribution want = distribution(w, true);
        const Distribution got = distribution_of(source_of(v), weight, true);
        const std::string what = "kind " + std::to_string(kind) + " n " + std::to_string(n);
        EXPECT_EQ(got.count, want.count) << what;
        EXPECT_EQ(bits(got.mean), bits(want.mean)) << what;
        EXPECT_EQ(got.min, want.min) << what;
        EXPECT_EQ(got.max, want.max) << what;
        EXPECT_EQ(got.median, want.median) << what;
        EXPECT_EQ(got.p05, want.p05) << what;
        EXPECT_EQ(got.p95, want.p95) << what;
        EXPECT_EQ(got.mad, want.mad) << what;
      }
    }
  }
}

// By hand: {5, 1, 4, 2, 3, 600}: sorted 1 2 3 4 5 600; median at q*n - 0.5 = 2.5 -> 3.5;
// deviations from 3.5: 1.5 2.5 0.5 1.5 0.5 596.5 -> sorted 0.5 0.5 1.5 1.5 2.5 596.5 -> MAD 1.5;
// p05 at 0.3 - 0.5 < 0 -> 1; p95 at 5.2 >= 5 -> 600. NaN values are skipped.
TEST(Select, TheDistributionByHand) {
  const std::vector<double> v{5, 1, 4, std::nan(""), 2, 3, 600};
  const Distribution d = distribution_of(source_of(v), 1.0, true);
  EXPECT_EQ(d.count, 6u);
  EXPECT_DOUBLE_EQ(d.median, 3.5);
  EXPECT_DOUBLE_EQ(d.mad, 1.5);
  EXPECT_DOUBLE_EQ(d.p05, 1.0);
  EXPECT_DOUBLE_EQ(d.p95, 600.0);
  EXPECT_DOUBLE_EQ(d.mean, 615.0 / 6);
  EXPECT_DOUBLE_EQ(median_from(source_of(v)), 3.5);
  EXPECT_TRUE(std::isnan(median_from(source_of({}))));
}
