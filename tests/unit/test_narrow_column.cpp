// The 16-bit blocks of src/narrow_column.hpp against a second code path, a plain vector that
// receives the same writes. Generated columns of each kind a log gives (timers that jitter, a
// loss that falls, stalls, values that spread too far, missing values, rewrites; steps of one
// rank and of two printing into one file) must read back as written, and each must end in the
// form it calls for: a column that cannot tell which form it is in could hold everything as
// plain values and still read back right.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "decimal_column.hpp"
#include "narrow_column.hpp"

namespace mfu::detail {
namespace {

constexpr std::int32_t kMissing = std::numeric_limits<std::int32_t>::min();
constexpr std::size_t kBlock = NarrowColumn<std::int32_t>::kBlock;

/// A NarrowColumn and the vector it must agree with.
template <class T = std::int32_t>
struct Checked {
  explicit Checked(T missing = static_cast<T>(kMissing)) : column(missing), fill(missing) {}
  NarrowColumn<T> column;
  T fill;
  std::vector<T> ref;

  void put(std::size_t i, T d) {
    column.put(i, d);
    if (i >= ref.size()) ref.resize(i + 1, fill);
    ref[i] = d;
  }
  void push(T d) { put(ref.size(), d); }

  /// Every value by get(), and by read() over ranges of uneven length, some past the end.
  void expect_same(std::mt19937_64& rng) const {
    ASSERT_EQ(column.active(), !ref.empty());
    for (std::size_t i = 0; i < ref.size() + 10; ++i)
      ASSERT_EQ(column.get(i), i < ref.size() ? ref[i] : fill) << "get " << i;
    for (int r = 0; r < 20; ++r) {
      const std::size_t first = ref.empty() ? 0 : rng() % (ref.size() + 5);
      const std::size_t n = rng() % (3 * kBlock);
      std::vector<T> got(n, 12345);
      column.read(first, n, [&](std::size_t k, T d) { got[k] = d; });
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = first + k;
        ASSERT_EQ(got[k], i < ref.size() ? ref[i] : fill) << "read " << first << "+" << k;
      }
    }
  }
};

// Timers as a log prints them: forward passes of 0.304817 s at 6 decimals jitter by +-1%
// (digits 301769..307865, a spread of 6,096), so every block holds 16-bit offsets and the
// column takes 2 bytes a value: 100,000 of them fill a first chunk of offsets grown by doubling
// from 256 slots to 131,072 (262,144 bytes), plus 25 blocks of 16 bytes; a plain int32 column
// would take 524,288 bytes.
TEST(NarrowColumn, JitteringTimersTakeTwoBytesAValue) {
  std::mt19937_64 rng(1);
  Checked<> c;
  for (int k = 0; k < 100000; ++k) c.push(304817 + static_cast<std::int32_t>(rng() % 6097) - 3048);
  c.expect_same(rng);
  EXPECT_TRUE(c.column.in_blocks());
  EXPECT_EQ(c.column.wide_blocks(), 0u);
  EXPECT_LE(c.column.bytes(), 262144u + 32u * 16u);
}

// A loss that falls from 10.000000 to 2.500000 over 500,000 records, by 15 digits a record and
// up to 60 of noise (no rule): up to 61,485 a block, more than one window holds, so each
// block's base moves as the values leave it, which rebase() allows as long as the block's own
// spread fits.
TEST(NarrowColumn, ADriftingValueMovesItsBlocksBases) {
  std::mt19937_64 rng(2);
  Checked<> c;
  for (std::int32_t k = 0; k < 500000; ++k)
    c.push(10000000 - 15 * k + static_cast<std::int32_t>(rng() % 61));
  c.expect_same(rng);
  EXPECT_TRUE(c.column.in_blocks());
  EXPECT_EQ(c.column.wide_blocks(), 0u);
  // A rise just as fast within one block, written backwards: the window moves down too.
  Checked<> back;
  for (std::int32_t k = 0; k < static_cast<std::int32_t>(kBlock); ++k)
    back.put(kBlock - 1 - static_cast<std::size_t>(k), 5000000 + 15 * k);
  back.expect_same(rng);
  EXPECT_EQ(back.column.wide_blocks(), 0u);
}

// Steps of about 1 s at 3 decimals (digits ~1000) with a stall of 30 s (30000: a spread of
// 29,000, which fits) and of 120 s (120000: 119,000 does not). Each of the 5 blocks with a
// 120 s stall holds int32s; the other 45 keep offsets, and the column stays narrow (5 of 50
// blocks is under an eighth).
TEST(NarrowColumn, AStallWidensOnlyItsBlock) {
  std::mt19937_64 rng(3);
  Checked<> c;
  const std::size_t n = 50 * kBlock;
  for (std::size_t k = 0; k < n; ++k) c.push(1000 + static_cast<std::int32_t>(rng() % 50));
  for (std::size_t b = 0; b < 50; b += 10) {
    c.put(b * kBlock + 7, 120000);
    c.put(b * kBlock + 9, 30000);
  }
  c.put(5 * kBlock + 3, 30000);  // fits: no wide block
  c.expect_same(rng);
  EXPECT_TRUE(c.column.in_blocks());
  EXPECT_EQ(c.column.wide_blocks(), 5u);
  // Written again inside a wide block: it holds whatever is written.
  c.put(10 * kBlock + 100, kMissing);
  c.put(10 * kBlock + 101, -7);
  c.expect_same(rng);
}

// Values that spread over a million (a timer with 6 decimals varying by whole seconds): the
// fourth wide block is more than an eighth of the four, and the column turns plain int32.
TEST(NarrowColumn, ValuesSpreadTooFarTurnTheColumnPlain) {
  std::mt19937_64 rng(4);
  Checked<> c;
  for (std::size_t k = 0; k < 10 * kBlock; ++k) c.push(static_cast<std::int32_t>(rng() % 1000000));
  c.expect_same(rng);
  EXPECT_TRUE(c.column.plain());
  EXPECT_EQ(c.column.wide_blocks(), 0u);
  EXPECT_LE(c.column.bytes(), 4u * 65536u);  // plain: 4 bytes a slot, 40,960 in 65,536 slots
}

/// Trials of whatever order and mix of writes to a column of T: gaps, missing values, values
/// at the ends of T (offsets are taken modulo 2^64), rules (+1, constant) that break, rewrites
/// anywhere, blocks that turn wide under a rewrite. Each trial's column must read back as the
/// vector does, in whichever form it ends, and so must its copy.
template <class T>
void check_any_writes(T fill, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 80; ++trial) {
    Checked<T> c(fill);
    const std::size_t n = 1 + rng() % (trial % 4 == 0 ? 40000 : 3000);
    const auto level = static_cast<std::int64_t>(rng() % 4000000) - 2000000;
    const auto spread = trial % 5 == 0 ? 2000000 : static_cast<std::int64_t>(rng() % 70000);
    const bool rule = trial % 7 == 1;                   // steps +1 until the writes break them
    std::size_t i = trial % 3 == 0 ? rng() % 9000 : 0;  // a column that starts late
    const auto value = [&]() -> T {
      if (rule && rng() % 500 != 0) return static_cast<T>(level + static_cast<std::int64_t>(i));
      switch (rng() % 50) {
        case 0: return fill;
        case 1: return std::numeric_limits<T>::max();
        case 2: return std::numeric_limits<T>::min() + 1;
        default: return static_cast<T>(level + static_cast<std::int64_t>(rng() % (spread + 1)));
      }
    };
    for (std::size_t k = 0; k < n; ++k) {
      c.put(i, value());
      i += rng() % 20 == 0 ? 1 + rng() % 300 : 1;  // some gaps
    }
    for (int w = 0; w < 300; ++w) {
      i = rng() % (c.ref.size() + 50);
      c.put(i, value());
    }
    c.expect_same(rng);
    Checked<T> copied(fill);
    copied.column = c.column;
    copied.ref = c.ref;
    copied.expect_same(rng);
    c.column.shrink_to_fit();
    c.expect_same(rng);
  }
}

TEST(NarrowColumn, ReadsBackWhatWasWrittenWhateverItsForm) {
  check_any_writes<std::int32_t>(kMissing, 5);
  check_any_writes<std::int32_t>(-1, 6);
  check_any_writes<std::int64_t>(-1, 7);
  check_any_writes<std::int64_t>(std::numeric_limits<std::int64_t>::min(), 8);
}

// Steps +1 stay a rule: 200,000 of them hold no storage at all.
TEST(NarrowColumn, StepsOfOneRankStayARule) {
  std::mt19937_64 rng(9);
  Checked<std::int64_t> c(-1);
  for (std::int64_t k = 1; k <= 200000; ++k) c.push(k);
  c.expect_same(rng);
  EXPECT_FALSE(c.column.in_blocks());
  EXPECT_FALSE(c.column.plain());
  EXPECT_EQ(c.column.bytes(), 0u);
}

// Two ranks printing into one file: steps 1, 1, 2, 2, ... (no rule). 200,000 of them take
// 2-byte offsets in a first chunk grown by doubling from 256 slots to 262,144 (524,288 bytes),
// and 49 blocks of 16 bytes in a vector of 64, where plain int64 took 262,144 x 8 = 2 MiB. A
// restart back to step 1 halfway changes nothing: each block has its own base.
TEST(NarrowColumn, StepsOfTwoRanksInOneFileTakeTwoBytes) {
  std::mt19937_64 rng(10);
  Checked<std::int64_t> c(-1);
  for (std::int64_t k = 0; k < 200000; ++k) c.push(1 + (k % 100000) / 2);
  c.expect_same(rng);
  EXPECT_TRUE(c.column.in_blocks());
  EXPECT_EQ(c.column.wide_blocks(), 0u);
  EXPECT_LE(c.column.bytes(), 524288u + 64u * 16u);
}

/// The double a parser reads from `text` (strtod rounds correctly, as the parsers' own reads).
double parsed(const std::string& text) {
  return std::strtod(text.c_str(), nullptr);
}

bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// FLOPs as the native format prints them, 7 significant digits: "2.500439e+16" is 2500439 x
// 10^10, digits 2500439 at scale -10 (worked by hand), and every such count reads back as the
// very double strtod gave. 300,000 of them, spread by +-0.1% (digits 2497939..2502939: one
// window), take 2-byte offsets: about 1 MB where doubles took 2,400,000 bytes (4 MiB in chunks).
TEST(DecimalColumn, CountsWithFewDigitsAreHeldAsDigits) {
  std::mt19937_64 rng(6);
  DecimalColumn flops(DecimalColumn::kLeastScale);
  std::vector<double> ref;
  for (int k = 0; k < 300000; ++k) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6fe+16",
                  2.500439 + static_cast<double>(rng() % 5001) * 1e-6 - 0.0025);
    ref.push_back(parsed(text));
    flops.put(ref.size() - 1, ref.back());
  }
  EXPECT_EQ(flops.scale(), -10);
  for (std::size_t i = 0; i < ref.size(); ++i) ASSERT_TRUE(same_bits(flops.get(i), ref[i])) << i;
  // Offsets in a first chunk of 524,288 slots, and 74 blocks of 16 bytes in a vector of 128.
  EXPECT_LE(flops.bytes(), 2u * 524288u + 128u * 16u);
  EXPECT_EQ(DecimalColumn::from_digits(2500439, -10), parsed("2.500439e+16"));
}

// Every count of up to 7 significant digits times 10^e (e = 0..15), as a parser reads
// "1234567e9", is held as its digits at scale -e (found by products with 10^-e, checked by
// products with 10^e) and reads back as that very double; whole seconds (Unix timestamps,
// scale 0) too. 2,000 random digits per exponent.
TEST(DecimalColumn, WholeCountsOfEveryExponentAreHeldAsDigits) {
  std::mt19937_64 rng(8);
  for (int e = 0; e <= 15; ++e) {
    DecimalColumn c(DecimalColumn::kLeastScale);
    std::vector<double> ref;
    for (int k = 0; k < 2000; ++k) {
      // Digits not ending in 0 (1 + 10 x ..., or 1..9): the column's scale is -e exactly.
      const std::uint64_t d = (rng() % 999999) * 10 + 1 + rng() % 9;
      ref.push_back(parsed(std::to_string(d) + "e" + std::to_string(e)));
      c.put(ref.size() - 1, ref.back());
    }
    ASSERT_EQ(c.scale(), std::optional<int>(-e)) << "e = " << e;
    for (std::size_t i = 0; i < ref.size(); ++i)
      ASSERT_TRUE(same_bits(c.get(i), ref[i])) << "e = " << e << ", " << ref[i];
  }
  DecimalColumn seconds;
  std::vector<double> ref;
  for (std::int64_t t = 1704067200; t < 1704067200 + 3000; t += 1 + static_cast<int>(rng() % 7)) {
    ref.push_back(static_cast<double>(t));
    seconds.put(ref.size() - 1, ref.back());
  }
  ASSERT_EQ(seconds.scale(), std::optional<int>(0));
  for (std::size_t i = 0; i < ref.size(); ++i) ASSERT_TRUE(same_bits(seconds.get(i), ref[i]));
}

// A count with more digits moves the column to a finer scale (8 digits: 25004391 x 10^9), one
// that is no short decimal (a third of 10^16) turns it into doubles; zeros, missing values and
// whole counts (tokens) on the way. Each reads back bit for bit, and a constant is known as one.
TEST(DecimalColumn, CountsReadBackBitForBitWhateverTheirScale) {
  const double third = 1e16 / 3;
  const std::vector<std::vector<double>> columns = {
      {0.0, 0.0, parsed("2.500439e+16"), parsed("2.5004391e+16"), std::nan(""), parsed("1e22")},
      {parsed("2.500439e+16"), parsed("1.5e15"), third, parsed("7e3"), -0.0},
      {524288, 524288, 524288, 1048576, parsed("3.2e-5")},
      {parsed("1.5e15"), parsed("1.5e15"), parsed("1.5e15")},
  };
  for (const auto& values : columns) {
    DecimalColumn c(DecimalColumn::kLeastScale);
    for (std::size_t i = 0; i < values.size(); ++i) c.put(i, values[i]);
    for (std::size_t i = 0; i < values.size(); ++i)
      EXPECT_TRUE(same_bits(c.get(i), values[i]) || (std::isnan(c.get(i)) && std::isnan(values[i])))
          << values[i];
  }
  DecimalColumn constant(DecimalColumn::kLeastScale);
  for (std::size_t i = 0; i < 3 * kBlock; ++i) constant.put(i, parsed("1.5e15"));
  EXPECT_EQ(constant.uniform(3 * kBlock), parsed("1.5e15"));
  EXPECT_EQ(constant.scale(), -14);  // 15 x 10^14
  constant.put(kBlock + 5, parsed("1.6e15"));
  EXPECT_EQ(constant.uniform(3 * kBlock), std::nullopt);
}

}  // namespace
// Throughput as Megatron and most parsers give it: "400.9" TFLOP/s read, then times 10^12. The
// product rounds, so d x 10^11 is not always that double (for 357 of the 9,000 values from 100.0
// to 999.9, 43 of the 900 from 10.0 to 99.9: counted in Python, float("32.2") * 1e12 !=
// 322 * 1e11): a column of counts (no unit) turns into doubles within a few values, while a column
// with the unit 10^12 holds every one as the digits of the printed decimal (scale 1) and reads it
// back bit for bit. A value of no such form (a third of 10^15, or raw FLOP/s with many digits) then
// turns it into doubles, values intact.
TEST(DecimalColumn, AUnitHoldsDecimalsAParserMultipliedAsDigits) {
  std::mt19937_64 rng(12);
  DecimalColumn with_unit(0, 1e12), counts(DecimalColumn::kLeastScale);
  std::vector<double> ref;
  int inexact = 0;  // products that are not d x 10^11 exactly, as the test counts them itself
  for (int k = 0; k < 200000; ++k) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", 10.0 + static_cast<double>(rng() % 9900) / 10);
    ref.push_back(parsed(text) * 1e12);
    const double digits = std::round(parsed(text) * 10);
    inexact += digits * 1e11 != ref.back() ? 1 : 0;
    with_unit.put(ref.size() - 1, ref.back());
    counts.put(ref.size() - 1, ref.back());
  }
  EXPECT_GT(inexact, 5000);  // about 4% of 200,000: why the unit is needed
  EXPECT_EQ(counts.scale(), std::nullopt);
  EXPECT_EQ(with_unit.scale(), 1);
  for (std::size_t i = 0; i < ref.size(); ++i)
    ASSERT_TRUE(same_bits(with_unit.get(i), ref[i])) << i;
  // Digits 100..9999, a spread that fits 16-bit offsets: 2 bytes a value (a first chunk of
  // 262,144 offsets, 49 blocks of 16 bytes in a vector of 64), against 8 as doubles.
  EXPECT_LE(with_unit.bytes(), 2u * 262144u + 64u * 16u);
  ref.push_back(1e15 / 3);
  ref.push_back(std::nan(""));
  ref.push_back(parsed("412.5") * 1e12);
  for (std::size_t i = ref.size() - 3; i < ref.size(); ++i) with_unit.put(i, ref[i]);
  EXPECT_EQ(with_unit.scale(), std::nullopt);
  for (std::size_t i = 0; i < ref.size(); ++i)
    ASSERT_TRUE(same_bits(with_unit.get(i), ref[i]) ||
                (std::isnan(ref[i]) && std::isnan(with_unit.get(i))))
        << i;
}

}  // namespace mfu::detail
