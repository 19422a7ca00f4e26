// Dates to Unix seconds (detail::unix_seconds, and read_timestamp_prefix on top of it) against
// the C library's timegm, a second code path, on generated dates: runs of lines on one date,
// dates that alternate line by line, month ends, leap days, and two threads at once (what a
// cache of the last date, tried for speed and dropped, would have to get right).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <ctime>
#include <random>
#include <thread>
#include <vector>

#include "io/timestamp.hpp"

namespace mfu::detail {
namespace {

struct Civil {
  int year, month, day, hour, minute, second;
};

double by_timegm(const Civil& c) {
  std::tm tm{};
  tm.tm_year = c.year - 1900;
  tm.tm_mon = c.month - 1;
  tm.tm_mday = c.day;
  tm.tm_hour = c.hour;
  tm.tm_min = c.minute;
  tm.tm_sec = c.second;
  return static_cast<double>(::timegm(&tm));
}

/// 20,000 times of day on dates from 1990 to 2200: a new date after 1-4 lines, every fifth run
/// alternating between two dates line by line; days up to each month's last (29 Feb included
/// in leap years, by the Gregorian rule).
std::vector<Civil> generated(unsigned seed) {
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto last_day = [](int y, int m) {
    static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : kDays[m - 1];
  };
  auto date = [&] {
    const int y = uniform(1990, 2200), m = uniform(1, 12);
    return Civil{y, m, uniform(0, 3) == 0 ? last_day(y, m) : uniform(1, last_day(y, m)), 0, 0, 0};
  };
  std::vector<Civil> out;
  while (out.size() < 20000) {
    const Civil a = date(), b = date();
    const bool alternate = uniform(0, 4) == 0;
    for (int k = uniform(1, 4); k > 0; --k) {
      Civil c = alternate && k % 2 == 0 ? b : a;
      c.hour = uniform(0, 23);
      c.minute = uniform(0, 59);
      c.second = uniform(0, 59);
      out.push_back(c);
    }
  }
  return out;
}

void expect_as_timegm(const std::vector<Civil>& dates) {
  for (const Civil& c : dates) {
    const double want = by_timegm(c);
    ASSERT_EQ(unix_seconds(c.year, c.month, c.day, c.hour, c.minute, c.second), want)
        << fmt::format("{}-{}-{} {}:{}:{}", c.year, c.month, c.day, c.hour, c.minute, c.second);
    const std::string text = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", c.year, c.month,
                                         c.day, c.hour, c.minute, c.second);
    std::size_t length = 0;
    ASSERT_EQ(read_timestamp_prefix(text, length), want) << text;
    EXPECT_EQ(length, text.size());
  }
}

TEST(TimestampDates, UnixSecondsAgreeWithTimegm) {
  expect_as_timegm(generated(1));
}

TEST(TimestampDates, TwoThreadsAtOnceAgreeWithTimegm) {
  std::thread other([] { expect_as_timegm(generated(2)); });
  expect_as_timegm(generated(3));
  other.join();
}

}  // namespace
}  // namespace mfu::detail
