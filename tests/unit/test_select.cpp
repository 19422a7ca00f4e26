// Exact selection without a buffer (analysis/select.hpp), checked against a second code path:
// the k-th element of a sorted copy, and distribution() over a buffer of Weighted values.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/select.hpp"
#include "analysis/stats.hpp"

using namespace mfu::detail;
using mfu::Distribution;

namespace {

/// distribution_of_values() of a buffer (analyze reads the MFU slots in place the same way).
Distribution distribution_of_buffer(std::vector<WeightedF> v, unsigned threads) {
  return distribution_of_values(
      v.size(), [&v](std::size_t i) { return v[i]; }, threads, [&v] { return std::move(v); });
}

/// The values of v as a source whose passes run on `threads` threads.
auto source_of(const std::vector<double>& v, unsigned threads = 1) {
  return make_source(
      [&v](std::size_t lo, std::size_t hi, auto&& f) {
        for (std::size_t i = lo; i < hi; ++i) f(v[i]);
      },
      v.size(), threads);
}

bool same_value(double x, double y) {
  return (std::isnan(x) && std::isnan(y)) || x == y;
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
        EXPECT_EQ(bits(got.min), bits(want.min)) << what;  // -0 and +0 apart
        EXPECT_EQ(bits(got.max), bits(want.max)) << what;
        EXPECT_EQ(got.median, want.median) << what;
        EXPECT_EQ(got.p05, want.p05) << what;
        EXPECT_EQ(got.p95, want.p95) << what;
        EXPECT_EQ(got.mad, want.mad) << what;
      }
    }
  }
}

// The smallest and largest value keep the sign of zero the buffered path gives: the first of
// equal values stays (std::min and std::max keep their first argument on a tie).
TEST(Select, ZerosOfBothSignsGiveTheBufferedMinAndMax) {
  const std::vector<std::vector<double>> inputs = {
      {0.0, -0.0, 1.0}, {-0.0, 0.0, 1.0}, {-1.0, 0.0, -0.0}, {-1.0, -0.0, 0.0}, {-0.0, -0.0}};
  for (const auto& v : inputs) {
    std::vector<Weighted> w;
    for (double x : v) w.push_back({x, 1.0});
    const Distribution want = distribution(w, true);
    const Distribution got = distribution_of(source_of(v), 1.0, true);
    EXPECT_EQ(bits(got.min), bits(want.min)) << v[0] << " " << v[1];
    EXPECT_EQ(bits(got.max), bits(want.max)) << v[0] << " " << v[1];
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

// Passes cut across threads count and collect the same values: every rank, the whole
// distribution and the median are the same bit for bit on 1, 2, 3 and 8 threads (inputs of
// 300,000 values: five blocks of 2^16, so 2 and 3 threads cut them in different places).
TEST(Select, ThreadsDoNotChangeTheResult) {
  std::mt19937_64 rng(13);
  for (int kind = 0; kind < 5; ++kind) {
    const std::vector<double> v = generated(kind, 300000, rng);
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    const std::vector<std::size_t> ranks{0, 1, 150000, 299999, 15000, 285000};
    const Distribution one = distribution_of(source_of(v, 1), 1.0, true);
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
      const std::string what =
          "kind " + std::to_string(kind) + " threads " + std::to_string(threads);
      ASSERT_GT(parts_of(v.size(), threads).size(), threads > 1 ? 1u : 0u) << what;
      const auto got = select_ranks(source_of(v, threads), ranks, sorted.front(), sorted.back());
      for (std::size_t j = 0; j < ranks.size(); ++j) EXPECT_EQ(got[j], sorted[ranks[j]]) << what;
      const Distribution d = distribution_of(source_of(v, threads), 1.0, true);
      EXPECT_EQ(bits(d.mean), bits(one.mean)) << what;
      EXPECT_EQ(bits(d.median), bits(one.median)) << what;
      EXPECT_EQ(bits(d.p05), bits(one.p05)) << what;
      EXPECT_EQ(bits(d.p95), bits(one.p95)) << what;
      EXPECT_EQ(bits(d.mad), bits(one.mad)) << what;
      EXPECT_EQ(bits(median_from(source_of(v, threads))), bits(one.median)) << what;
    }
  }
}

/// Whether `parts` are whole blocks of [0, n), in order, covering every item once.
void expect_whole_blocks_covering(const Parts& parts, std::size_t n) {
  std::size_t next = 0;
  for (const auto& p : parts) {
    EXPECT_EQ(p.lo, next);
    EXPECT_EQ(p.lo % kParallelBlock, 0u);
    EXPECT_GT(p.hi, p.lo);
    next = p.hi;
  }
  EXPECT_EQ(next, n);
}

// The cuts: whole blocks, in order, covering every item once; one part for one block.
TEST(Select, PartsCoverTheItemsInWholeBlocks) {
  EXPECT_TRUE(parts_of(0, 4).empty());
  EXPECT_EQ(parts_of(kParallelBlock, 8).size(), 1u);
  EXPECT_EQ(parts_of(kParallelBlock + 1, 8).size(), 2u);
  for (std::size_t n : {2 * kParallelBlock, 5 * kParallelBlock + 17, 100 * kParallelBlock}) {
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
      const std::size_t blocks = (n + kParallelBlock - 1) / kParallelBlock;
      const auto parts = parts_of(n, threads);
      ASSERT_EQ(parts.size(), std::min<std::size_t>(threads, blocks));
      EXPECT_EQ(parts.threads, threads);
      expect_whole_blocks_covering(parts, n);
      // Four a thread (the threads take them in turn), but one on one thread.
      const auto four = parts_of(n, threads, 4);
      ASSERT_EQ(four.size(), std::min<std::size_t>(threads == 1 ? 1 : threads * 4, blocks));
      expect_whole_blocks_covering(four, n);
    }
  }
}

// The threads take the parts in turn: each part runs once, with its own range, whatever thread
// takes it; an exception of a part comes out after all parts ran, the first in part order.
TEST(Select, ThreadsTakeEachPartOnceAndTheFirstErrorInPartOrderComesOut) {
  const std::size_t n = 20 * kParallelBlock + 5;
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    const Parts parts = parts_of(n, threads, 4);
    std::vector<std::atomic<int>> runs(parts.size());
    std::vector<PartRange> seen(parts.size());
    run_parts(parts, [&](std::size_t p, std::size_t lo, std::size_t hi) {
      ++runs[p];
      seen[p] = {lo, hi};
    });
    for (std::size_t p = 0; p < parts.size(); ++p) {
      EXPECT_EQ(runs[p].load(), 1) << threads << " threads, part " << p;
      EXPECT_EQ(seen[p].lo, parts[p].lo);
      EXPECT_EQ(seen[p].hi, parts[p].hi);
    }
    if (parts.size() < 4) continue;
    std::atomic<std::size_t> ran{0};
    try {
      run_parts(parts, [&](std::size_t p, std::size_t, std::size_t) {
        ++ran;
        if (p == 3 || p == 1) throw std::runtime_error("part " + std::to_string(p));
      });
      ADD_FAILURE() << "no exception came out";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "part 1") << threads << " threads";
    }
    EXPECT_EQ(ran.load(), parts.size()) << threads << " threads";
  }
}

// The per-iteration MFU buffer (floats, with holes for records without one): the passes give
// distribution()'s numbers bit for bit (a zero's sign aside), on any number of threads, for equal
// weights (the passes) and unequal ones (distribution() itself). Each class of generated() as
// floats.
TEST(Select, TheBufferDistributionEqualsDistributionBitForBit) {
  std::mt19937_64 rng(17);
  for (int kind = 0; kind < 5; ++kind) {
    for (std::size_t n : {1u, 5u, 1000u, 300000u}) {
      for (float weight : {1.0F, 10.0F, -1.0F}) {  // -1: every 10th record of weight 10
        const std::vector<double> v = generated(kind, n, rng);
        std::vector<WeightedF> buffer;
        for (std::size_t i = 0; i < n; ++i) {
          const float w = weight > 0 ? weight : (i % 10 == 0 ? 10.0F : 1.0F);
          buffer.push_back({static_cast<float>(v[i]), w});
          if (i % 7 == 3) buffer.back() = {std::nanf(""), 0.0F};  // a hole
        }
        const Distribution want = distribution(buffer, true);
        for (unsigned threads : {1u, 2u, 3u}) {
          const Distribution got = distribution_of_buffer(buffer, threads);
          const std::string what = "kind " + std::to_string(kind) + " n " + std::to_string(n) +
                                   " weight " + std::to_string(weight) + " threads " +
                                   std::to_string(threads);
          EXPECT_EQ(got.count, want.count) << what;
          EXPECT_EQ(bits(got.mean), bits(want.mean)) << what;
          // Order statistics as values: the selection gives a zero as +0 (select_ranks); an
          // empty buffer (floats of kind 2 overflow to infinity) gives NaN to both.
          EXPECT_TRUE(same_value(got.min, want.min)) << what << " min";
          EXPECT_TRUE(same_value(got.max, want.max)) << what << " max";
          EXPECT_TRUE(same_value(got.median, want.median)) << what << " median";
          EXPECT_TRUE(same_value(got.p05, want.p05)) << what << " p05";
          EXPECT_TRUE(same_value(got.p95, want.p95)) << what << " p95";
          EXPECT_TRUE(same_value(got.mad, want.mad)) << what << " mad";
        }
      }
    }
  }
}

namespace {

/// Keys of one class: int32 digits as a decimal timer column holds them, with negative ones
/// (a missing timer's INT32_MIN, a -1 sentinel) that the median leaves out.
std::vector<std::int32_t> generated_keys(int kind, std::size_t n, std::mt19937_64& rng) {
  std::vector<std::int32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = static_cast<std::int64_t>(rng() % 1000003);
    std::int64_t k = 0;
    switch (kind) {
      case 0: k = 308000 + r % 2000; break;                       // clustered: one high bucket
      case 1: k = (r % 7) * 32768 + (r % 3) - 1; break;           // at bucket edges (2^15)
      case 2: k = static_cast<std::int64_t>(rng() >> 33); break;  // the whole 31-bit range
      case 3: k = r % 5; break;                                   // duplicates, and zeros
      default: k = 300000 + r % 10; break;
    }
    if (rng() % 17 == 0) k = rng() % 2 == 0 ? std::numeric_limits<std::int32_t>::min() : -1;
    v[i] = static_cast<std::int32_t>(k);
  }
  return v;
}

}  // namespace

// The median on keys (two radix passes) against two other paths: median_of on a sorted-rule
// copy of the values, and median_from's selection on the doubles, bit for bit, on every class
// of keys, odd and even counts, small and split across threads.
TEST(Select, TheMedianOfKeysIsTheMedianOfTheirValues) {
  std::mt19937_64 rng(29);
  const auto value = [](std::int32_t k) { return static_cast<double>(k) / 1e6; };
  for (int kind = 0; kind < 5; ++kind) {
    for (std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{1000},
          std::size_t{1001}, std::size_t{3} * kParallelBlock + 5}) {
      const std::vector<std::int32_t> keys = generated_keys(kind, n, rng);
      std::vector<double> values;  // of the non-negative keys
      for (std::int32_t k : keys)
        if (k >= 0) values.push_back(value(k));
      const double want = median_of(values);
      for (unsigned threads : {1u, 2u, 3u}) {
        const auto keys_source = make_source(
            [&keys](std::size_t lo, std::size_t hi, auto&& f) {
              for (std::size_t i = lo; i < hi; ++i) f(keys[i]);
            },
            keys.size(), threads);
        const double got = median_of_keys(keys_source, value);
        const std::string what = "kind " + std::to_string(kind) + " n " + std::to_string(n) +
                                 " threads " + std::to_string(threads);
        ASSERT_TRUE(same_value(got, want)) << what << ": " << got << " vs " << want;
        if (!values.empty()) {
          EXPECT_EQ(bits(got), bits(want)) << what;
          EXPECT_EQ(bits(got), bits(median_from(source_of(values, threads)))) << what;
        }
      }
    }
  }
}
