#include <gtest/gtest.h>

#include "mfu/error.hpp"
#include "mfu/units.hpp"

namespace mfu {
namespace {

TEST(Units, ParsesFlopCountsWithSiPrefixes) {
  EXPECT_DOUBLE_EQ(parse_flops("350T"), 350e12);
  EXPECT_DOUBLE_EQ(parse_flops("3.5e14"), 3.5e14);
  EXPECT_DOUBLE_EQ(parse_flops("35 TFLOP"), 35e12);
  EXPECT_DOUBLE_EQ(parse_flops("1.5 PFLOPs"), 1.5e15);
}

TEST(Units, ParsesFlopRates) {
  EXPECT_DOUBLE_EQ(parse_flop_rate("989.5 TFLOP/s"), 989.5e12);
  EXPECT_DOUBLE_EQ(parse_flop_rate("312T"), 312e12);
  EXPECT_DOUBLE_EQ(parse_flop_rate("19.5TFLOPS"), 19.5e12);
}

TEST(Units, ParsesDurations) {
  EXPECT_DOUBLE_EQ(parse_duration("330ms"), 0.330);
  EXPECT_DOUBLE_EQ(parse_duration("13.75s"), 13.75);
  EXPECT_DOUBLE_EQ(parse_duration("1.5h"), 5400.0);
  EXPECT_DOUBLE_EQ(parse_duration("2d"), 172800.0);
  EXPECT_DOUBLE_EQ(parse_duration("90m"), 5400.0);
  EXPECT_DOUBLE_EQ(parse_duration("250us"), 250e-6);
  // A bare number is a guess (12 s? 12 ms?): refused, but 0 is 0 in any unit.
  EXPECT_THROW((void)parse_duration("12"), Error);
  EXPECT_DOUBLE_EQ(parse_duration("0"), 0.0);
  EXPECT_THROW((void)parse_flop_rate("19.5"), Error);
  EXPECT_THROW((void)parse_quantity("900", Quantity::kBandwidth), Error);
  // A count stays unit-free.
  EXPECT_DOUBLE_EQ(parse_flops("3.5e13"), 3.5e13);
}

TEST(Units, ParsesRatesAndCounts) {
  EXPECT_DOUBLE_EQ(parse_rate("1.2M"), 1.2e6);
  EXPECT_DOUBLE_EQ(parse_rate("238.3k"), 238300.0);
  EXPECT_DOUBLE_EQ(parse_rate("238.3k tok/s"), 238300.0);
  EXPECT_DOUBLE_EQ(parse_count("540.35B"), 540.35e9);
  EXPECT_DOUBLE_EQ(parse_count("15T"), 15e12);
  EXPECT_DOUBLE_EQ(parse_count("1024"), 1024.0);
}

TEST(Units, ParsesRatiosAsPercentOrFraction) {
  EXPECT_DOUBLE_EQ(parse_ratio("40%"), 0.40);
  EXPECT_DOUBLE_EQ(parse_ratio("0.4"), 0.40);
  EXPECT_DOUBLE_EQ(parse_ratio("100%"), 1.0);
}

TEST(Units, RejectsABareRatioAboveOneAsAmbiguous) {
  try {
    (void)parse_ratio("40");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ambiguous"), std::string::npos);
  }
}

TEST(Units, RejectsAQuantityOfTheWrongKindAndSaysSo) {
  try {
    (void)parse_flops("330ms");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("a FLOP count"), std::string::npos) << msg;
    EXPECT_NE(msg.find("a time"), std::string::npos) << msg;
  }
  EXPECT_THROW((void)parse_duration("35 TFLOP"), Error);
  EXPECT_THROW((void)parse_rate("330ms"), Error);
  EXPECT_THROW((void)parse_count("40%"), Error);
}

TEST(Units, RejectsGarbageNanInfAndNegatives) {
  EXPECT_THROW((void)parse_duration(""), Error);
  EXPECT_THROW((void)parse_duration("abc"), Error);
  EXPECT_THROW((void)parse_duration("nan"), Error);
  EXPECT_THROW((void)parse_duration("inf"), Error);
  EXPECT_THROW((void)parse_duration("-3s"), Error);
  EXPECT_THROW((void)parse_duration("3 parsecs"), Error);
}

TEST(Units, ParsesScales) {
  EXPECT_DOUBLE_EQ(parse_scale("0.5x"), 0.5);
  EXPECT_DOUBLE_EQ(parse_scale("0"), 0.0);
  EXPECT_DOUBLE_EQ(parse_scale("80%"), 0.8);
  EXPECT_THROW((void)parse_scale("half"), Error);
}

TEST(Units, FormatsForHumans) {
  EXPECT_EQ(format_flop_rate(989.5e12), "989.5 TFLOP/s");
  EXPECT_EQ(format_flops(35e12), "35.0 TFLOP");
  EXPECT_EQ(format_duration(0.330), "330 ms");
  EXPECT_EQ(format_duration(13.75), "13.75 s");
  EXPECT_EQ(format_duration(5400), "90.0 min");
  EXPECT_EQ(format_count(238300), "238.3k");
  EXPECT_EQ(format_count(540.35e9), "540.35B");
  EXPECT_EQ(format_percent(0.3399), "34.0%");
  EXPECT_EQ(format_number(0.0), "0");
  EXPECT_EQ(format_number(1234.5678, 6), "1234.57");
}

}  // namespace
}  // namespace mfu

#include <charconv>
#include <cstdio>
#include <cstring>
#include <random>

#include "text.hpp"

namespace mfu {
namespace {

/// fast_from_chars on all of `s` gives the bits std::from_chars gives and ends where it ends
/// (no number where it finds none).
void expect_as_std_from_chars(const std::string& s) {
  double a = 0, b = 0;
  const char* end = s.data() + s.size();
  const char* pa = detail::fast_from_chars(s.data(), end, a);
  const auto [pb, ec] = std::from_chars(s.data(), end, b);
  if (ec != std::errc()) {
    ASSERT_EQ(pa, nullptr) << s;
    return;
  }
  ASSERT_EQ(pa, pb) << s;
  ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0) << s << " " << a << " vs " << b;
}

TEST(FastFromChars, SameBitsAndEndAsStdFromChars) {
  // Random decimals of the shapes logs print, plus edge cases: the fast path must agree with
  // std::from_chars bit for bit and consume the same characters.
  std::mt19937_64 rng(42);
  std::vector<std::string> inputs = {"0",
                                     "-0",
                                     "1.",
                                     ".5",
                                     "1e",
                                     "1e+",
                                     "1e5",
                                     "3.5e13",
                                     "0.330",
                                     "1e-22",
                                     "1e23",
                                     "9007199254740993",
                                     "12345678901234567890",
                                     "1e400",
                                     "-1e-400",
                                     "4.9e-324",
                                     "-",
                                     ".",
                                     "e5",
                                     "00012.5000"};
  for (int i = 0; i < 200000; ++i) {
    const int digits = 1 + static_cast<int>(rng() % 20);
    const int dot = rng() % 2 ? static_cast<int>(rng() % static_cast<unsigned>(digits)) : -1;
    char buf[64];
    std::size_t n = 0;
    if (rng() % 5 == 0) buf[n++] = '-';
    for (int d = 0; d < digits; ++d) {
      if (d == dot) buf[n++] = '.';
      buf[n++] = static_cast<char>('0' + rng() % 10);
    }
    if (rng() % 3 == 0)
      n += static_cast<std::size_t>(
          std::snprintf(buf + n, sizeof buf - n, "e%d", static_cast<int>(rng() % 60) - 30));
    inputs.emplace_back(buf, n);
  }
  for (const auto& s : inputs) ASSERT_NO_FATAL_FAILURE(expect_as_std_from_chars(s));
}

// Every byte value after a run of 0 to 20 digits (with or without a point), the run starting at
// 0 to 7 bytes into the text and the text ending 0 to 9 bytes after that byte: the same bits
// and end as std::from_chars. Worked example: "12345678" then ':' is 12345678, and ends at
// the ':' (a byte that is '9' + 1).
TEST(FastFromChars, SameEndWhateverByteFollowsTheDigits) {
  std::mt19937_64 rng(45);
  for (int length = 0; length <= 20; ++length)
    for (int byte = 0; byte < 256; ++byte)
      for (int offset = 0; offset < 8; ++offset) {
        std::string s(static_cast<std::size_t>(offset), 'x');
        const int dot = rng() % 2 ? length / 2 : -1;
        for (int d = 0; d < length; ++d) {
          if (d == dot) s += '.';
          s += static_cast<char>('0' + rng() % 10);
        }
        s += static_cast<char>(byte);
        s.append(rng() % 10, '7');
        double a = 0, b = 0;
        const char* first = s.data() + offset;
        const char* end = s.data() + s.size();
        const char* pa = detail::fast_from_chars(first, end, a);
        const auto [pb, ec] = std::from_chars(first, end, b);
        if (ec != std::errc()) {
          ASSERT_EQ(pa, nullptr) << s;
          continue;
        }
        ASSERT_EQ(pa, pb) << s;
        ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0) << s;
      }
  double v = 0;
  const std::string worked = "12345678:";
  EXPECT_EQ(detail::fast_from_chars(worked.data(), worked.data() + worked.size(), v),
            worked.data() + 8);
  EXPECT_EQ(v, 12345678.0);
}

// Numbers followed by what follows them in a log line (the reader must stop where the number
// does, and a digit loop that looked past it would show): the same bits and the same end as
// std::from_chars on the whole text.
TEST(FastFromChars, SameBitsAndEndWithTextAfterTheNumber) {
  std::mt19937_64 rng(43);
  const char* tails[] = {
      ",\"loss\":2.5}",        "}", " ms | lr", "\xff\xfe", "/2", ":", "e", "e-", ".5.5",
      "12345678901234567890,", ""};
  for (int i = 0; i < 200000; ++i) {
    std::string s;
    if (rng() % 5 == 0) s += '-';
    const int whole = static_cast<int>(rng() % 21), fraction = static_cast<int>(rng() % 21);
    for (int d = 0; d < whole; ++d) s += static_cast<char>('0' + rng() % 10);
    if (rng() % 3 != 0) {
      s += '.';
      for (int d = 0; d < fraction; ++d) s += static_cast<char>('0' + rng() % 10);
    }
    if (rng() % 4 == 0) {
      s += 'e';
      s += std::to_string(static_cast<int>(rng() % 50) - 25);
    }
    s += tails[rng() % std::size(tails)];
    ASSERT_NO_FATAL_FAILURE(expect_as_std_from_chars(s));
  }
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// Issue 18: one GPU is "1 GPU"; money is readable at scale; tiny GPU time is not 2.5e-06 hours.
TEST(Units, CountsMoneyAndGpuTimeReadAsWords) {
  EXPECT_EQ(count_of(1, "GPU"), "1 GPU");
  EXPECT_EQ(count_of(8, "GPU"), "8 GPUs");
  EXPECT_EQ(count_of(0, "iteration"), "0 iterations");
  EXPECT_EQ(format_money(12.345), "$12.35");
  EXPECT_EQ(format_money(1089632.4), "$1,089,632");
  EXPECT_EQ(format_money(1000), "$1,000");
  EXPECT_EQ(format_money(-2500), "-$2,500");
  EXPECT_EQ(format_gpu_time(7.617), "7.617 GPU-hours");
  // 15T tokens at 1M tok/s on 64 GPUs: 1.5e7 s x 64 / 3600 = 266,666.7 GPU-hours.
  EXPECT_EQ(format_gpu_time(1.5e7 * 64 / 3600), "266,667 GPU-hours");
  EXPECT_EQ(format_figure(9999.4), "9999");
  EXPECT_EQ(format_figure(-12345.6), "-12,346");
  EXPECT_EQ(format_gpu_time(2.5e-6), "0.009 GPU-seconds");  // 2.5e-6 h = 9 ms of one GPU
  EXPECT_EQ(format_gpu_time(0.05), "3 GPU-minutes");
  EXPECT_EQ(format_gpu_time(0.002333), "8.4 GPU-seconds");
}

}  // namespace
}  // namespace mfu
