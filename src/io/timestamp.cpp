// Timestamp readers (see timestamp.hpp).
#include "io/timestamp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mfu::detail {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool digits(std::string_view s, std::size_t pos, std::size_t n) {
  if (pos + n > s.size()) return false;
  for (std::size_t i = pos; i < pos + n; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

int num(std::string_view s, std::size_t pos, std::size_t n) {
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) v = v * 10 + (s[i] - '0');
  return v;
}

/// "HH:MM:SS[.,fraction]" at pos; returns seconds of day or NaN.
double time_of_day(std::string_view s, std::size_t pos, std::size_t* end) {
  if (!digits(s, pos, 2) || pos + 8 > s.size() || s[pos + 2] != ':' || !digits(s, pos + 3, 2) ||
      s[pos + 5] != ':' || !digits(s, pos + 6, 2))
    return kNaN;
  double sec = num(s, pos, 2) * 3600.0 + num(s, pos + 3, 2) * 60.0 + num(s, pos + 6, 2);
  std::size_t i = pos + 8;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    double scale = 0.1;
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      sec += (s[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
  }
  if (end) *end = i;
  return sec;
}

}  // namespace

double unix_seconds(int year, int month, int day, int hour, int minute, double second) {
  // Howard Hinnant's days_from_civil.
  year -= month <= 2 ? 1 : 0;
  const int era = (year >= 0 ? year : year - 399) / 400;
  const int yoe = year - era * 400;
  const int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const double days = static_cast<double>(era) * 146097.0 + doe - 719468.0;
  return days * 86400.0 + hour * 3600.0 + minute * 60.0 + second;
}

double find_timestamp(std::string_view line) {
  const std::size_t limit = std::min<std::size_t>(line.size(), 96);
  // absl / glog: [IWEF]MMDD HH:MM:SS.micro at the very start (possibly after "[rankN]:").
  std::size_t start = 0;
  if (line.substr(0, 5) == "[rank") {
    std::size_t c = line.find("]:");
    if (c != std::string_view::npos && c < 16) start = c + 2;
  }
  if (start + 14 < line.size()) {
    const char c = line[start];
    if ((c == 'I' || c == 'W' || c == 'E' || c == 'F') && digits(line, start + 1, 4) &&
        line[start + 5] == ' ') {
      const double tod = time_of_day(line, start + 6, nullptr);
      if (!std::isnan(tod)) {
        const int month = num(line, start + 1, 2);
        const int day = num(line, start + 3, 2);
        if (month >= 1 && month <= 12 && day >= 1 && day <= 31)
          return unix_seconds(1970, month, day, 0, 0, tod);
      }
    }
  }
  // YYYY-MM-DD[ T]HH:MM:SS somewhere near the start.
  for (std::size_t i = 4; i + 15 <= limit; ++i) {
    if (line[i] != '-') continue;
    const std::size_t y = i - 4;
    if (!digits(line, y, 4) || !digits(line, i + 1, 2) || line[i + 3] != '-' ||
        !digits(line, i + 4, 2))
      continue;
    const char sep = line[i + 6];
    if (sep != ' ' && sep != 'T') continue;
    const double tod = time_of_day(line, i + 7, nullptr);
    if (std::isnan(tod)) continue;
    const int year = num(line, y, 4), month = num(line, i + 1, 2), day = num(line, i + 4, 2);
    if (year < 1990 || year > 2200 || month < 1 || month > 12 || day < 1 || day > 31) continue;
    return unix_seconds(year, month, day, 0, 0, tod);
  }
  return kNaN;
}

namespace {

bool valid_date(int year, int month, int day) {
  return year >= 1990 && year <= 2200 && month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

/// An ISO 8601 zone at `i`: "Z", "+HH:MM", "+HHMM", "-HH". Returns the offset east of UTC in
/// seconds (0 when there is none) and moves `i` past it.
double zone_offset(std::string_view s, std::size_t& i) {
  if (i < s.size() && s[i] == 'Z') {
    ++i;
    return 0;
  }
  if (i >= s.size() || (s[i] != '+' && s[i] != '-') || !digits(s, i + 1, 2)) return 0;
  const double sign = s[i] == '-' ? -1.0 : 1.0;
  double offset = num(s, i + 1, 2) * 3600.0;
  std::size_t j = i + 3;
  if (j < s.size() && s[j] == ':') ++j;
  if (digits(s, j, 2)) {
    offset += num(s, j, 2) * 60.0;
    j += 2;
  }
  i = j;
  return sign * offset;
}

/// "YYYY-MM-DD[T ]HH:MM:SS[.fff][zone]" or "YYYY/MM/DD HH:MM:SS".
double read_year_first(std::string_view s, std::size_t& i) {
  if (!digits(s, 0, 4) || s.size() < 19 || (s[4] != '-' && s[4] != '/') || s[7] != s[4] ||
      !digits(s, 5, 2) || !digits(s, 8, 2) || (s[10] != ' ' && s[10] != 'T'))
    return kNaN;
  const int year = num(s, 0, 4), month = num(s, 5, 2), day = num(s, 8, 2);
  const double tod = time_of_day(s, 11, &i);
  if (std::isnan(tod) || !valid_date(year, month, day)) return kNaN;
  const double offset = s[4] == '-' ? zone_offset(s, i) : 0.0;
  return unix_seconds(year, month, day, 0, 0, tod) - offset;
}

/// "MM/DD/YYYY HH:MM:SS" (the transformers library's default logging format).
double read_month_first(std::string_view s, std::size_t& i) {
  if (s.size() < 19 || !digits(s, 0, 2) || s[2] != '/' || !digits(s, 3, 2) || s[5] != '/' ||
      !digits(s, 6, 4) || s[10] != ' ')
    return kNaN;
  const int month = num(s, 0, 2), day = num(s, 3, 2), year = num(s, 6, 4);
  const double tod = time_of_day(s, 11, &i);
  if (std::isnan(tod) || !valid_date(year, month, day)) return kNaN;
  return unix_seconds(year, month, day, 0, 0, tod);
}

/// glog/absl "I1201 12:00:00.123456  1234 file.py:12]": the severity letter, month and day,
/// time, thread id and source location (year-less; see kYearlessLimit).
double read_glog(std::string_view s, std::size_t& i) {
  if (s.size() < 14 || (s[0] != 'I' && s[0] != 'W' && s[0] != 'E' && s[0] != 'F') ||
      !digits(s, 1, 4) || s[5] != ' ')
    return kNaN;
  const int month = num(s, 1, 2), day = num(s, 3, 2);
  const double tod = time_of_day(s, 6, &i);
  if (std::isnan(tod) || month < 1 || month > 12 || day < 1 || day > 31) return kNaN;
  // Thread id and "file:line]" follow in glog's own lines; absl's Python logging has them too.
  const std::size_t close = s.find(']', i);
  if (close != std::string_view::npos && close < i + 96) {
    const std::string_view tail = s.substr(i, close - i);
    if (tail.find(':') != std::string_view::npos && tail.find('[') == std::string_view::npos)
      i = close + 1;
  }
  return unix_seconds(1970, month, day, 0, 0, tod);
}

}  // namespace

double read_timestamp_prefix(std::string_view s, std::size_t& length) {
  std::size_t i = 0;
  double t = read_year_first(s, i);
  if (std::isnan(t)) t = read_month_first(s, i);
  if (std::isnan(t)) t = read_glog(s, i);
  if (std::isnan(t)) return kNaN;
  if (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != ']') return kNaN;
  length = i;
  return t;
}

}  // namespace mfu::detail
