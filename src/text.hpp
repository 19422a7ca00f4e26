#pragma once
// Small string helpers shared by the parsers: no allocation unless a copy is asked for.

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mfu::detail {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[nodiscard]] inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/// The offset of the first '"' or '\\' among the n bytes at p (n when there is none): where a
/// JSON string's plain characters end. 16 bytes a step with SSE2 (every x86-64 has it; a
/// trace's kernel names and keys are most of its bytes), never reading past p + n.
[[nodiscard]] inline std::size_t quote_or_backslash(const char* p, std::size_t n) {
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const int hit =
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, backslash)));
    if (hit != 0) return i + static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(hit)));
  }
#endif
  while (i < n && p[i] != '"' && p[i] != '\\') ++i;
  return i;
}

/// Whether the n bytes at a and at b are the same. Inline, 16 bytes a step from 16 bytes up
/// (the last step overlapping the one before it), never reading outside either range: the
/// Megatron field memo compares a 10-35 byte prefix per field, where a memcmp call was mostly
/// the call.
[[nodiscard]] inline bool same_bytes(const char* a, const char* b, std::size_t n) {
#if defined(__SSE2__)
  if (n >= 16) {
    const auto same_16 = [](const char* x, const char* y) {
      const __m128i vx = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
      const __m128i vy = _mm_loadu_si128(reinterpret_cast<const __m128i*>(y));
      return _mm_movemask_epi8(_mm_cmpeq_epi8(vx, vy)) == 0xFFFF;
    };
    for (std::size_t i = 0; i + 16 < n; i += 16)
      if (!same_16(a + i, b + i)) return false;
    return same_16(a + n - 16, b + n - 16);
  }
#endif
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

/// s.find(c, from), looking through the first 32 bytes inline before calling memchr: a
/// field's value is a few bytes, where the call cost more than the search. 16 bytes a step
/// with SSE2 where they lie inside s (the byte loop was a tenth of the Megatron line parse).
[[nodiscard]] inline std::size_t find_near(std::string_view s, char c, std::size_t from) {
  const std::size_t stop = std::min(s.size(), from + 32);
  std::size_t i = from;
#if defined(__SSE2__)
  const __m128i want = _mm_set1_epi8(c);
  for (; i + 16 <= stop; i += 16) {
    const __m128i text = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const auto hits = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(text, want)));
    if (hits != 0) return i + static_cast<std::size_t>(std::countr_zero(hits));
  }
#endif
  for (; i < stop; ++i)
    if (s[i] == c) return i;
  return stop >= s.size() ? std::string_view::npos : s.find(c, stop);
}

[[nodiscard]] inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

[[nodiscard]] inline char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}

[[nodiscard]] inline std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

[[nodiscard]] inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

[[nodiscard]] inline bool starts_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}
[[nodiscard]] inline bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}
/// s.find(p, from), by comparing the first and the last byte of p at 16 positions a step (SSE2)
/// and the rest only where both match (W. Mula, "SIMD-friendly algorithms for substring
/// searching", 2016). libstdc++'s find calls memchr for p's first byte and again after each
/// false start: in log lines, where a key's first letter is everywhere, that was most of the
/// time of format detection and of the Megatron line test.
[[nodiscard]] inline std::size_t find_text(std::string_view s, std::string_view p,
                                           std::size_t from = 0) {
  const std::size_t m = p.size();
  if (from > s.size() || m > s.size() - from) return s.npos;
  if (m < 2) return s.find(p, from);
  const char* h = s.data();
  const std::size_t last = s.size() - m;  // the last position p may start at
  std::size_t i = from;
  const auto rest_matches = [&](std::size_t at) {
    return std::char_traits<char>::compare(h + at + 1, p.data() + 1, m - 2) == 0;
  };
#if defined(__SSE2__)
  const __m128i first = _mm_set1_epi8(p.front()), final = _mm_set1_epi8(p.back());
  for (; i + 16 <= last + 1; i += 16) {  // both loads end at or before s's end
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i + m - 1));
    auto hits = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, final))));
    for (; hits != 0; hits &= hits - 1) {
      const std::size_t at = i + static_cast<std::size_t>(std::countr_zero(hits));
      if (rest_matches(at)) return at;
    }
  }
#endif
  for (; i <= last; ++i)
    if (h[i] == p.front() && h[i + m - 1] == p.back() && rest_matches(i)) return i;
  return s.npos;
}

[[nodiscard]] inline bool contains(std::string_view s, std::string_view p) {
  return find_text(s, p) != std::string_view::npos;
}

/// std::from_chars for a double, with Clinger's exact fast path for the decimals logs print
/// ("0.3301", "3.5e13", "1234"): a mantissa below 2^53 scaled by an exactly representable power
/// of ten is correctly rounded by one IEEE multiply or divide (Clinger 1990, "How to read
/// floating point numbers accurately"). Anything else goes to std::from_chars, so results and
/// the characters consumed are the same. Returns the end of the number, or nullptr.
[[nodiscard]] inline const char* fast_from_chars(const char* first, const char* last, double& out) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char* p = first;
  const bool neg = p < last && *p == '-';
  if (neg) ++p;
  std::uint64_t m = 0;
  int digits = 0, frac = 0;
  while (p < last && *p >= '0' && *p <= '9') {
    m = m * 10 + static_cast<unsigned>(*p - '0');
    ++digits;
    ++p;
  }
  if (p < last && *p == '.') {
    ++p;
    while (p < last && *p >= '0' && *p <= '9') {
      m = m * 10 + static_cast<unsigned>(*p - '0');
      ++digits;
      ++frac;
      ++p;
    }
  }
  int exp = 0;
  bool ok = digits > 0 && digits <= 19;
  if (ok && p < last && (*p == 'e' || *p == 'E')) {
    const char* q = p + 1;
    bool eneg = false;
    if (q < last && (*q == '+' || *q == '-')) eneg = *q++ == '-';
    if (q < last && *q >= '0' && *q <= '9') {
      int e = 0;
      while (q < last && *q >= '0' && *q <= '9' && e < 10000) e = e * 10 + (*q++ - '0');
      if (q < last && *q >= '0' && *q <= '9') ok = false;  // an absurd exponent: the slow path
      exp = eneg ? -e : e;
      p = q;
    }
  }
  const int e10 = exp - frac;
  if (ok && m <= (std::uint64_t{1} << 53) && e10 >= -22 && e10 <= 22) {
    double v = static_cast<double>(m);
    v = e10 < 0 ? v / kPow10[-e10] : v * kPow10[e10];
    out = neg ? -v : v;
    return p;
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc()) return nullptr;
  out = v;
  return end;
}

/// A step or iteration number read as a double: the whole number when it is one in [0, 9e15]
/// (below 2^53 = 9.007e15, where doubles still hold every integer exactly), else -1 (unknown).
/// Casting an out-of-range double to an integer is undefined behaviour.
[[nodiscard]] inline std::int64_t as_step(double v) {
  return (std::isfinite(v) && v >= 0 && v <= 9e15) ? static_cast<std::int64_t>(v) : -1;
}

/// A count read from a log as a double: the whole number when it is finite and within
/// [0, limit], else `fallback` (a model dimension of 1e120 is unknown, not undefined behaviour).
[[nodiscard]] inline std::int64_t as_count(double v, double limit = 9e15,
                                           std::int64_t fallback = 0) {
  return (std::isfinite(v) && v >= 0 && v <= limit) ? static_cast<std::int64_t>(v) : fallback;
}

/// Parses the whole of `s` as a double. Accepts "nan", "inf", "-inf"; returns nullopt on junk.
[[nodiscard]] inline std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double v = 0;
  const char* p = fast_from_chars(s.data(), s.data() + s.size(), v);
  if (p != s.data() + s.size()) return std::nullopt;
  return v;
}

/// Parses the whole of `s` as a signed integer.
[[nodiscard]] inline std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

/// `s` without its leading spaces and tabs (a number's field may be padded; a line break is not
/// a blank here).
[[nodiscard]] inline std::string_view skip_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

namespace text_detail {

/// take_number's path for thousands separators ("10,050"), apart from its common path: with
/// this and the word path inside its body, the Megatron iteration line took 96 ns instead of
/// 69-72 (BM_MegatronIterationLine). Not through the stack frame: forcing both out of line (120
/// -> 32 bytes of frame) changed nothing; the compiler inlines them either way. `t` has no
/// leading blank.
[[nodiscard]] inline std::optional<double> take_number_with_commas(std::string_view& s,
                                                                   std::string_view t) {
  // Copy digits without commas into a small buffer.
  char buf[64];
  std::size_t n = 0;
  std::size_t i = 0;
  while (i < t.size() && n < sizeof(buf)) {
    char c = t[i];
    if ((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
      if ((c == 'e' || c == 'E') && n == 0) break;
      buf[n++] = c;
      ++i;
    } else if (c == ',' && n > 0 && i + 1 < t.size() && t[i + 1] >= '0' && t[i + 1] <= '9') {
      ++i;
    } else {
      break;
    }
  }
  if (n == 0) return std::nullopt;
  const char* b = buf[0] == '+' ? buf + 1 : buf;
  double v = 0;
  auto [p, ec] = std::from_chars(b, buf + n, v);
  if (ec != std::errc() || p == b) return std::nullopt;
  // Advance over what was consumed: count the characters of t up to i, minus unconsumed tail.
  std::size_t consumed_digits = static_cast<std::size_t>(p - buf);
  std::size_t j = 0, seen = 0;
  while (j < t.size() && seen < consumed_digits) {
    if (t[j] != ',') ++seen;
    ++j;
  }
  s = t.substr(j);
  return v;
}

/// take_number's path for the words "nan", "inf" and "infinity" (std::from_chars does not
/// accept them with a sign in every libstdc++). `t` has no leading blank or '+'.
[[nodiscard]] inline std::optional<double> take_number_word(std::string_view& s,
                                                            std::string_view t) {
  std::string_view w = t;
  bool neg = false;
  if (!w.empty() && w.front() == '-') {
    neg = true;
    w.remove_prefix(1);
  }
  if (w.size() >= 3 && iequals(w.substr(0, 3), "nan")) {
    s = w.substr(3);
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (w.size() >= 3 && iequals(w.substr(0, 3), "inf")) {
    std::size_t k = (w.size() >= 8 && iequals(w.substr(0, 8), "infinity")) ? 8 : 3;
    s = w.substr(k);
    return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  return std::nullopt;
}

}  // namespace text_detail

/// take_number without thousands separators, into `out`: false (and `s` unchanged) when `s`
/// does not start with a number. Hot parsers call it rather than take_number: an optional<double>
/// returned from a function that is not inlined is built on the stack and read back with a wider
/// load than the flag's store, which stalls store forwarding (20% of take_number's samples on
/// the Megatron iteration line, perf annotate).
[[nodiscard]] inline bool take_number_to(std::string_view& s, double& out) {
  std::string_view t = skip_blanks(s);
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  const char* p = fast_from_chars(t.data(), t.data() + t.size(), out);
  if (p != nullptr && p != t.data()) {
    s = t.substr(static_cast<std::size_t>(p - t.data()));
    return true;
  }
  const auto word = text_detail::take_number_word(s, t);
  if (word) out = *word;
  return word.has_value();
}

/// Parses a number at the start of `s` and advances `s` past it. Thousands separators
/// ("10,050") are accepted when `allow_commas`; a trailing unit is left in `s`.
[[nodiscard]] inline std::optional<double> take_number(std::string_view& s,
                                                       bool allow_commas = false) {
  if (allow_commas) return text_detail::take_number_with_commas(s, skip_blanks(s));
  double v = 0;
  if (!take_number_to(s, v)) return std::nullopt;
  return v;
}

/// Splits on a single character; keeps empty fields.
[[nodiscard]] inline std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

/// Finds `key` in `s` and parses the number that follows it (after optional spaces/colon).
[[nodiscard]] inline std::optional<double> number_after(std::string_view s, std::string_view key,
                                                        bool allow_commas = false) {
  std::size_t pos = s.find(key);
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = s.substr(pos + key.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':' || rest.front() == '=' ||
                           rest.front() == '\t'))
    rest.remove_prefix(1);
  return take_number(rest, allow_commas);
}

/// Levenshtein distance, for "did you mean" suggestions.
[[nodiscard]] inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

/// `s` with what a terminal would act on made visible: C0 control characters (ESC, BEL, CR,
/// line breaks and tabs included), DEL and the UTF-8 C1 controls become "\xHH" / "\u00HH",
/// so text taken from a log cannot move the cursor, clear the screen, ring the bell or write
/// an OSC 8 link when a report prints it. Everything else, other UTF-8 included, is kept.
[[nodiscard]] inline std::string printable(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      o += "\\x";
      o += kHex[c >> 4];
      o += kHex[c & 15];
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      const auto d = static_cast<unsigned char>(s[++i]);
      o += "\\u00";
      o += kHex[d >> 4];
      o += kHex[d & 15];
    } else {
      o += static_cast<char>(c);
    }
  }
  return o;
}

/// Whether printable(s) would change `s` (the common case is not: no copy then).
[[nodiscard]] inline bool needs_printable(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) <= 0x9f)
      return true;
  }
  return false;
}

}  // namespace mfu::detail
