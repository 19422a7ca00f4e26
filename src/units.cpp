#include "mfu/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <optional>

#include "mfu/error.hpp"
#include "text.hpp"

namespace mfu {
namespace {

/// The unit family a suffix belongs to.
enum class UnitFamily {
  kNone,
  kFlop,
  kFlopPerSecond,
  kTime,
  kPerSecond,
  kPercent,
  kMoney,
  kBytePerSecond
};

struct Unit {
  UnitFamily family;
  double multiplier;  // into SI (seconds, FLOP, bytes/s ...)
};

const char* family_example(UnitFamily f) {
  switch (f) {
    case UnitFamily::kFlop: return "a FLOP count";
    case UnitFamily::kFlopPerSecond: return "a FLOP rate";
    case UnitFamily::kTime: return "a time";
    case UnitFamily::kPerSecond: return "a rate per second";
    case UnitFamily::kPercent: return "a percentage";
    case UnitFamily::kMoney: return "an amount of money";
    case UnitFamily::kBytePerSecond: return "a bandwidth";
    case UnitFamily::kNone: return "a plain number";
  }
  return "a number";
}

std::optional<double> si_prefix(char c, Quantity kind) {
  switch (c) {
    case 'k':
    case 'K': return 1e3;
    case 'M': return 1e6;
    case 'm':
      // "1.2m tokens/s" means million; minutes and milli are handled as whole units.
      if (kind == Quantity::kCount || kind == Quantity::kRate) return 1e6;
      return std::nullopt;
    case 'G':
    case 'B': return 1e9;  // B = billion for parameters and tokens
    case 'T': return 1e12;
    case 'P': return 1e15;
    case 'E': return 1e18;
    default: return std::nullopt;
  }
}

/// Units spelled as whole words, compared case-insensitively.
std::optional<Unit> whole_unit(std::string_view s, Quantity kind) {
  const std::string u = detail::to_lower(s);
  if (u.empty()) return Unit{UnitFamily::kNone, 1.0};
  if (u == "%") return Unit{UnitFamily::kPercent, 0.01};
  if (u == "ns") return Unit{UnitFamily::kTime, 1e-9};
  if (u == "us" || u == "\xc2\xb5s" || u == "usec") return Unit{UnitFamily::kTime, 1e-6};
  if (u == "ms" || u == "msec") return Unit{UnitFamily::kTime, 1e-3};
  if (u == "s" || u == "sec" || u == "secs" || u == "second" || u == "seconds")
    return Unit{UnitFamily::kTime, 1.0};
  if (u == "min" || u == "mins" || u == "minute" || u == "minutes")
    return Unit{UnitFamily::kTime, 60.0};
  if (u == "m" && kind == Quantity::kDuration) return Unit{UnitFamily::kTime, 60.0};
  if (u == "h" || u == "hr" || u == "hrs" || u == "hour" || u == "hours")
    return Unit{UnitFamily::kTime, 3600.0};
  if (u == "d" || u == "day" || u == "days") return Unit{UnitFamily::kTime, 86400.0};
  if (u == "w" || u == "week" || u == "weeks") return Unit{UnitFamily::kTime, 7 * 86400.0};
  if (u == "usd" || u == "$") return Unit{UnitFamily::kMoney, 1.0};
  return std::nullopt;
}

/// Units that may follow an SI prefix ("T" + "FLOP/s").
std::optional<Unit> base_unit(std::string_view s) {
  const std::string u = detail::to_lower(s);
  if (u.empty()) return Unit{UnitFamily::kNone, 1.0};
  // "TF", "TFLOPS" and "TFLOP/s" alike ("FLOPS" is a count to some and a rate to others:
  // the quantity asked for decides).
  if (u == "flop" || u == "flops" || u == "flo" || u == "f") return Unit{UnitFamily::kFlop, 1.0};
  if (u == "flop/s" || u == "flops/s" || u == "flop/sec" || u == "flops/sec" || u == "f/s" ||
      u == "flopsps")
    return Unit{UnitFamily::kFlopPerSecond, 1.0};
  if (u == "/s" || u == "tok/s" || u == "tokens/s" || u == "token/s" || u == "samples/s" ||
      u == "sample/s" || u == "it/s" || u == "steps/s" || u == "seq/s" || u == "tps" || u == "/sec")
    return Unit{UnitFamily::kPerSecond, 1.0};
  if (u == "tok" || u == "tokens" || u == "params" || u == "parameters" || u == "samples" ||
      u == "gpus" || u == "steps")
    return Unit{UnitFamily::kNone, 1.0};
  if (u == "b/s" || u == "bps") return Unit{UnitFamily::kBytePerSecond, 1.0};
  if (u == "bit/s") return Unit{UnitFamily::kBytePerSecond, 0.125};
  return std::nullopt;
}

bool family_fits(UnitFamily f, Quantity kind) {
  switch (kind) {
    case Quantity::kFlops:
      // "FLOPS" is used for both counts and rates in the wild; accept either spelling.
      return f == UnitFamily::kNone || f == UnitFamily::kFlop;
    case Quantity::kFlopRate:
      return f == UnitFamily::kNone || f == UnitFamily::kFlop || f == UnitFamily::kFlopPerSecond;
    case Quantity::kDuration: return f == UnitFamily::kNone || f == UnitFamily::kTime;
    case Quantity::kRate: return f == UnitFamily::kNone || f == UnitFamily::kPerSecond;
    case Quantity::kCount: return f == UnitFamily::kNone;
    case Quantity::kRatio: return f == UnitFamily::kNone || f == UnitFamily::kPercent;
    case Quantity::kMoney: return f == UnitFamily::kNone || f == UnitFamily::kMoney;
    case Quantity::kBandwidth: return f == UnitFamily::kNone || f == UnitFamily::kBytePerSecond;
  }
  return false;
}

const char* example_for(Quantity kind) {
  switch (kind) {
    case Quantity::kFlops: return "35T or 3.5e13 FLOP";
    case Quantity::kFlopRate: return "989.5 TFLOP/s, 989.5TF or 312T (a unit or prefix is needed)";
    case Quantity::kDuration: return "330ms, 13.75s, 1.5h or 2d (a unit is needed)";
    case Quantity::kRate: return "1.2M or 238.3k tok/s";
    case Quantity::kCount: return "540.35B, 15T or 1024";
    case Quantity::kRatio: return "40% or 0.4";
    case Quantity::kMoney: return "2.50 or $2.50";
    case Quantity::kBandwidth: return "900 GB/s or 400 Gbit/s";
  }
  return "";
}

[[noreturn]] void fail(std::string_view text, Quantity kind, std::string why) {
  throw Error(fmt::format("cannot read '{}' as {}: {}", text, describe(kind), why),
              fmt::format("write {} like {}", describe(kind), example_for(kind)));
}

}  // namespace

const char* describe(Quantity kind) {
  switch (kind) {
    case Quantity::kFlops: return "a FLOP count";
    case Quantity::kFlopRate: return "a FLOP rate";
    case Quantity::kDuration: return "a time";
    case Quantity::kRate: return "a rate per second";
    case Quantity::kCount: return "a count";
    case Quantity::kRatio: return "a ratio";
    case Quantity::kMoney: return "an amount of money";
    case Quantity::kBandwidth: return "a bandwidth";
  }
  return "a number";
}

double parse_quantity(std::string_view text, Quantity kind) {
  std::string_view s = detail::trim(text);
  if (s.empty()) fail(text, kind, "it is empty");
  bool money_sign = false;
  if (s.front() == '$') {
    money_sign = true;
    s.remove_prefix(1);
  }
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double value = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) fail(text, kind, "it does not start with a number");
  if (!std::isfinite(value)) fail(text, kind, "it is not a finite number");
  std::string_view suffix =
      detail::trim(std::string_view(ptr, static_cast<std::size_t>(end - ptr)));
  // "1,234" and "1_000" are not accepted: a comma is too easily a decimal separator elsewhere.
  std::optional<Unit> unit = whole_unit(suffix, kind);
  double multiplier = 1.0;
  if (!unit) {
    // Try an SI prefix followed by a base unit, with optional space ("989.5 TFLOP/s", "1.2 M").
    if (!suffix.empty()) {
      // "tflop/s" as "TFLOP/s": a lower-case prefix is read before a FLOP unit only, where
      // it cannot be milli ("mflop" stays unknown).
      char prefix = suffix.front();
      if (std::string_view("kgtpe").find(prefix) != std::string_view::npos && suffix.size() > 1 &&
          (suffix[1] == 'f' || suffix[1] == 'F'))
        prefix = static_cast<char>(prefix - 'a' + 'A');
      if (auto p = si_prefix(prefix, kind)) {
        std::string_view rest = detail::trim(suffix.substr(1));
        if (auto u = base_unit(rest)) {
          multiplier = *p;
          unit = u;
        } else if (kind == Quantity::kBandwidth) {
          const std::string r = detail::to_lower(rest);
          if (r == "b/s" || r == "byte/s" || r == "bytes/s")
            unit = Unit{UnitFamily::kBytePerSecond, 1};
          if (rest == "b/s" || r == "bit/s" || r == "bps" || r == "bits/s")
            unit = Unit{UnitFamily::kBytePerSecond, 0.125};
          if (unit) multiplier = *p;
        }
      }
    }
    if (!unit) unit = base_unit(suffix);
  }
  if (!unit) fail(text, kind, fmt::format("unknown unit '{}'", suffix));
  if (money_sign && kind != Quantity::kMoney) fail(text, kind, "'$' is only for money");
  if (!family_fits(unit->family, kind)) {
    fail(text, kind, fmt::format("'{}' is {}", suffix, family_example(unit->family)));
  }
  if (unit->family == UnitFamily::kNone && multiplier != 1.0 &&
      (kind == Quantity::kDuration || kind == Quantity::kRatio || kind == Quantity::kMoney)) {
    fail(text, kind, fmt::format("'{}' is a multiplier, not a unit of {}", suffix, describe(kind)));
  }
  // A time, a FLOP rate or a bandwidth without a unit is a guess at what was meant ("330":
  // seconds or milliseconds? "19.5": FLOP/s or TFLOP/s?): refused, except 0, which is 0 in
  // any unit.
  const bool needs_unit =
      kind == Quantity::kDuration || kind == Quantity::kFlopRate || kind == Quantity::kBandwidth;
  if (needs_unit && unit->family == UnitFamily::kNone && multiplier == 1.0 && value != 0)
    fail(text, kind, "a bare number has no unit");
  double result = value * multiplier * unit->multiplier;
  if (result < 0) fail(text, kind, "it is negative");
  if (!std::isfinite(result)) fail(text, kind, "it is too large");
  if (kind == Quantity::kRatio) {
    // "1" reads as 1% to some and 100% to others; a fraction below 1 is unambiguous.
    if (unit->family == UnitFamily::kNone && result >= 1.0) {
      fail(text, kind,
           "a bare number of 1 or more is ambiguous (1% or 100%?); write a percentage with '%', "
           "or a fraction below 1");
    }
    if (result > 1.0) fail(text, kind, "a share cannot exceed 100%");
  }
  return result;
}

double parse_scale(std::string_view text) {
  std::string_view s = detail::trim(text);
  if (!s.empty() && (s.back() == 'x' || s.back() == 'X')) {
    s.remove_suffix(1);
    double v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v < 0) {
      throw Error(fmt::format("cannot read '{}' as a scale", text),
                  "write a multiplier like 0.5x, a share like 80%, or 0 to remove it");
    }
    return v;
  }
  double v = 0;
  if (!s.empty() && s.back() == '%') {
    // A share of what was measured: 80% keeps 80%; 150% is 1.5x.
    s.remove_suffix(1);
    s = detail::trim(s);
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v < 0) {
      throw Error(fmt::format("cannot read '{}' as a scale", text),
                  "write a multiplier like 0.5x, a share like 80%, or 0 to remove it");
    }
    return v / 100.0;
  }
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v < 0) {
    throw Error(fmt::format("cannot read '{}' as a scale", text),
                "write a multiplier like 0.5x, a share like 80%, or 0 to remove it");
  }
  return v;
}

namespace {

std::string with_prefix(double value, std::string_view unit, bool billion_b) {
  if (!std::isfinite(value)) return "n/a";
  static constexpr std::array<std::pair<double, const char*>, 6> kPrefixes = {
      {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  const double a = std::fabs(value);
  for (const auto& [scale, name] : kPrefixes) {
    if (a >= scale * 0.9995) {
      const double m = value / scale;
      const char* p = (billion_b && scale == 1e9) ? "B" : name;
      const int decimals = 2;
      std::string num = fmt::format("{:.{}f}", m, decimals);
      // Trim "989.50" to "989.5" but keep at least one decimal place.
      while (num.size() > 3 && num.back() == '0' && num[num.size() - 2] != '.') num.pop_back();
      if (unit.empty()) return num + p;
      return fmt::format("{} {}{}", num, p, unit);
    }
  }
  std::string num = format_number(value, 4);
  return unit.empty() ? num : fmt::format("{} {}", num, unit);
}

}  // namespace

std::string format_flops(double flops) {
  return with_prefix(flops, "FLOP", false);
}
std::string format_flop_rate(double r) {
  return with_prefix(r, "FLOP/s", false);
}
std::string format_count(double v) {
  return with_prefix(v, "", true);
}
std::string format_bytes(double bytes) {
  return with_prefix(bytes, "B", false);
}
std::string format_bandwidth(double bytes_per_s) {
  return with_prefix(bytes_per_s, "B/s", false);
}

std::string format_duration(double s) {
  if (!std::isfinite(s)) return "n/a";
  if (s == 0) return "0 s";
  const double a = std::fabs(s);
  if (a < 1e-3) return fmt::format("{:.1f} \xc2\xb5s", s * 1e6);
  if (a < 1.0) return fmt::format("{:.{}f} ms", s * 1e3, a < 0.01 ? 2 : (a < 0.1 ? 1 : 0));
  if (a < 120.0) return fmt::format("{:.{}f} s", s, a < 10 ? 3 : 2);
  if (a < 7200.0) return fmt::format("{:.1f} min", s / 60.0);
  if (a < 172800.0) return fmt::format("{:.2f} h", s / 3600.0);
  return fmt::format("{:.1f} d", s / 86400.0);
}

std::string format_percent(double ratio, int decimals) {
  if (!std::isfinite(ratio)) return "n/a";
  return fmt::format("{:.{}f}%", ratio * 100.0, decimals);
}

namespace {

/// |v| rounded to a whole number with a separator every three digits, after `negative_prefix`
/// when v is negative ("-$") and `plain_prefix` otherwise ("$").
std::string grouped(double v, std::string_view plain_prefix, std::string_view negative_prefix) {
  const std::string digits = fmt::format("{:.0f}", std::fabs(v));
  std::string out(v < 0 ? negative_prefix : plain_prefix);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace

std::string format_money(double amount) {
  if (!std::isfinite(amount)) return "n/a";
  if (std::fabs(amount) < 1000) return fmt::format("${:.2f}", amount);
  return grouped(amount, "$", "-$");
}

std::string format_figure(double value) {
  if (!std::isfinite(value)) return "n/a";
  if (std::fabs(value) < 1e4) return format_number(value, 4);
  return grouped(value, "", "-");
}

std::string count_of(double n, std::string_view noun) {
  return fmt::format("{} {}{}", format_number(n, 6), noun, n == 1 ? "" : "s");
}

std::string format_gpu_time(double gpu_hours) {
  if (!std::isfinite(gpu_hours)) return "n/a";
  if (gpu_hours >= 0.1 || gpu_hours == 0) return format_figure(gpu_hours) + " GPU-hours";
  if (gpu_hours * 60 >= 1) return format_number(gpu_hours * 60, 3) + " GPU-minutes";
  return format_number(gpu_hours * 3600, 3) + " GPU-seconds";
}

std::string format_number(double value, int significant) {
  if (!std::isfinite(value)) return "n/a";
  if (value == 0) return "0";
  const double a = std::fabs(value);
  if (a >= 1e15 || a < 1e-4) return fmt::format("{:.{}g}", value, significant);
  const int digits_before = a >= 1 ? static_cast<int>(std::floor(std::log10(a))) + 1 : 0;
  int decimals = std::max(0, significant - digits_before);
  if (a < 1) decimals = significant - static_cast<int>(std::floor(std::log10(a))) - 1;
  std::string s = fmt::format("{:.{}f}", value, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace mfu
