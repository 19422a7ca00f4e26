// Stage 4: the wall time, measured apart from the attribution. The log's clock is used when
// every timed record has a timestamp and the clock agrees with the printed step times after
// corrections for daylight-saving jumps and year-less timestamps that roll over; otherwise the
// record durations are (and the report says why).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>

#include "analysis/parallel.hpp"
#include "analysis/stages.hpp"
#include "mfu/units.hpp"

namespace mfu::detail {
namespace {

constexpr double kHour = 3600.0, kDay = 86400.0;
/// A clock that advances this much slower than the step times contradicts them.
constexpr double kSlowClockTolerance = 0.03;

struct Shift {
  double seconds = 0;
  const char* why = "";
};

/// The correction that makes a jump of `delta` between two records consistent with the
/// second record's duration `expected` (NaN after a restart: any downtime >= 0 is possible).
Shift detect_shift(double delta, double expected, double resolution) {
  if (known(expected)) {
    const double r = delta - expected;
    const double tol = std::max({60.0, 0.05 * expected, 2 * resolution});
    if (std::fabs(r - kHour) <= tol) return {-kHour, "a daylight-saving change (clock +1 h)"};
    if (std::fabs(r + kHour) <= tol) return {kHour, "a daylight-saving change (clock -1 h)"};
    for (double y : {365 * kDay, 366 * kDay})
      if (std::fabs(r + y) <= kDay) return {y, "a year-less timestamp rolling over New Year"};
    return {};
  }
  // After a restart the downtime is unknown (>= 0): only a clock back by most of an hour
  // reads as a daylight-saving change, one back by 365 days as a year-less roll-over.
  if (delta >= 0) return {};
  if (delta >= -kHour - 60 && delta <= -kHour + 600)
    return {kHour, "a daylight-saving change (clock -1 h)"};
  for (double y : {365 * kDay, 366 * kDay})
    if (delta + y >= 0 && delta + y <= kDay)
      return {y, "a year-less timestamp rolling over New Year"};
  return {};
}

/// The first timed record at or after i (the number of records when none): the timed records
/// are walked in place, without a list of their indices (8 B a record).
std::size_t next_timed(const Records& rec, std::size_t i) {
  while (i < rec.time.size() && std::isnan(rec.time[i])) ++i;
  return i;
}

/// The timed records' timestamps, corrected in place (`ts` holds them as the log prints
/// them, the k-th timed record's at k); false when the clock cannot be used.
bool correct_timestamps(const Run& run, const Records& rec, Clock& c, std::span<double> ts,
                        bool& moved_back) {
  double off = 0, clock_span = 0, durations = 0;
  const std::size_t n = rec.time.size();
  for (std::size_t k = 0, i = next_timed(rec, 0); i < n; ++k, i = next_timed(rec, i + 1)) {
    // Relative to the first record: differences of nearby doubles are exact, so the spans
    // and gaps telescope to end - start without the rounding of Unix-epoch magnitudes.
    double cur = (ts[k] - c.base) + off;
    if (k > 0) {
      const bool restart = (rec.flags[i] & kRecordSegmentStart) != 0;
      const double d = rec.time[i] * rec.count(i);
      const Shift s = detect_shift(cur - ts[k - 1], restart ? kUnknown : d, c.resolution);
      if (s.seconds != 0) {
        off += s.seconds;
        cur += s.seconds;
        moved_back = moved_back || s.seconds > 0;
        c.warnings.push_back(
            fmt::format("{}: the clock jumps by {} before this step: read as {} "
                        "and corrected",
                        record_location(run, i), format_duration(-s.seconds), s.why));
      }
      const double delta = cur - ts[k - 1];
      if (delta < -std::max(60.0, 2 * c.resolution)) {
        c.warnings.push_back(
            fmt::format("{}: the log's clock goes back {} with no restart: its "
                        "timestamps are not used; the wall time is the sum of "
                        "the record durations",
                        record_location(run, i), format_duration(-delta)));
        return false;
      }
      if (!restart) {
        clock_span += delta;
        durations += d;
      }
    }
    ts[k] = cur;
  }
  if (durations > 0 && clock_span < (1 - kSlowClockTolerance) * durations - 2 * c.resolution) {
    c.warnings.push_back(fmt::format(
        "the log's timestamps advance {} while its records say {} ({} slower): the clocks "
        "disagree, so the wall time is the sum of the record durations",
        format_duration(clock_span), format_duration(durations),
        format_percent(1 - clock_span / durations)));
    return false;
  }
  return true;
}

/// Lays the records on the corrected clock: spans, gaps and the tail add up to end - start.
void lay_out(const Records& rec, std::span<const double> ts, Clock& c) {
  const std::size_t n = rec.time.size();
  ClockLayout& at = c.layout;
  double carry = 0;  // clock minus record time not yet placed (second-resolution rounding)
  for (std::size_t k = 0, i = next_timed(rec, 0); i < n; ++k, i = next_timed(rec, i + 1)) {
    const double d = rec.time[i] * rec.count(i);
    if (k == 0) {
      at.set_gap(rec, i, ts[0] - d - c.start);
      continue;
    }
    const bool restart = (rec.flags[i] & kRecordSegmentStart) != 0;
    const double res = restart ? 0.0 : c.resolution;
    // Clock time since the previous record, with what earlier records carried; the cases
    // below keep gap + span - (carry before - carry after) equal to the clock's delta, and
    // never subtract a huge duration from a small clock (no rounding at its magnitude).
    const double avail = carry + (ts[k] - ts[k - 1]);
    const double x = avail - d;
    if (x > res) {  // a gap the clock shows
      at.set_gap(rec, i, x);
      carry = 0;
    } else if (x >= -res) {  // within the clock's resolution: carried
      carry = x;
    } else if (avail + res > 0) {  // the record claims more than the clock: squeezed
      at.set_span(rec, i, avail + res);
      carry = -res;
    } else {
      at.set_span(rec, i, 0);
      carry = avail;
    }
  }
  // What is still carried belongs to the tail; a deficit comes out of the last records.
  double tail = c.end - ts.back() + carry;
  for (std::size_t i = n; i-- > 0 && tail < 0;) {
    if (std::isnan(rec.time[i])) continue;
    double span = at.span(rec, i), gap = at.gap(rec, i);
    for (double* part : {&span, &gap}) {
      const double take = std::min(*part, -tail);
      *part -= take;
      tail += take;
    }
    at.set_span(rec, i, span);
    at.set_gap(rec, i, gap);
  }
  c.tail = std::max(0.0, tail);
}

}  // namespace

double ClockLayout::find(const Exceptions& e, std::size_t i, double fallback) {
  if (e.empty() || e.back().first < i) return fallback;
  const auto it = std::lower_bound(e.begin(), e.end(), i,
                                   [](const auto& x, std::size_t k) { return x.first < k; });
  return it != e.end() && it->first == i ? it->second : fallback;
}

void ClockLayout::put(Exceptions& e, std::size_t i, double seconds, double fallback) {
  const bool plain = seconds == fallback;
  if (e.empty() || e.back().first < i) {  // the common case: records laid out in order
    if (!plain) e.emplace_back(i, seconds);
    return;
  }
  const auto it = std::lower_bound(e.begin(), e.end(), i,
                                   [](const auto& x, std::size_t k) { return x.first < k; });
  const bool has = it != e.end() && it->first == i;
  if (plain) {
    if (has) e.erase(it);
  } else if (has) {
    it->second = seconds;
  } else {
    e.insert(it, {i, seconds});
  }
}

double ClockLayout::span(const Records& rec, std::size_t i) const {
  const double own = rec.time[i] * rec.count(i);
  return std::isnan(own) ? kUnknown : find(span_, i, own);
}

double ClockLayout::gap(const Records& rec, std::size_t i) const {
  return std::isnan(rec.time[i]) ? kUnknown : find(gap_, i, 0.0);
}

void ClockLayout::set_span(const Records& rec, std::size_t i, double seconds) {
  put(span_, i, seconds, rec.time[i] * rec.count(i));
}

void ClockLayout::set_gap(const Records&, std::size_t i, double seconds) {
  put(gap_, i, seconds, 0.0);
}

/// The timed records' timestamps as the log prints them, the k-th timed record's at k.
struct TimedStamps {
  std::unique_ptr<double[]> values;  // not zeroed: each part first touches its own stretch
  std::size_t size = 0;
  bool all_stamped = true;  ///< every timed record has a finite timestamp
  bool whole = true;        ///< every one is a whole number of seconds
};

/// The timed records' timestamps, read as a column a part of the records per thread: each
/// part counts its timed records, then writes its stretch. On one thread, the read and the
/// first touch of its pages were a serial 7% of BM_AnalyzeOnlyMegatron's samples.
TimedStamps timed_stamps(const Run& run, const Records& rec) {
  const Parts parts = parts_of(rec.time.size(), rec.threads, kPartsPerThread);
  std::vector<std::size_t> first(parts.size() + 1, 0);
  run_parts(parts, [&](std::size_t p, std::size_t lo, std::size_t hi) {
    std::size_t timed = 0;
    for (std::size_t i = lo; i < hi; ++i) timed += std::isnan(rec.time[i]) ? 0 : 1;
    first[p + 1] = timed;
  });
  for (std::size_t p = 0; p < parts.size(); ++p) first[p + 1] += first[p];
  TimedStamps out;
  out.size = first.back();
  out.values.reset(new double[out.size]);
  std::vector<std::pair<bool, bool>> found(parts.size());  // (all stamped, whole) per part
  run_parts(parts, [&](std::size_t p, std::size_t lo, std::size_t hi) {
    double* at = out.values.get() + first[p];
    bool stamped = true, whole = true;
    for_each_record_in(
        run.iterations, lo, hi,
        [&](std::size_t i, const Iteration& it) {
          if (!stamped || std::isnan(rec.time[i])) return;
          *at++ = it.timestamp_s;
          stamped = std::isfinite(it.timestamp_s);
          whole = whole && it.timestamp_s == std::floor(it.timestamp_s);
        },
        RecordFields::kTimestamp);
    found[p] = {stamped, whole};
  });
  for (const auto& [stamped, whole] : found) {
    out.all_stamped = out.all_stamped && stamped;
    out.whole = out.whole && whole;
  }
  return out;
}

Clock plan_clock(const Run& run, const Records& rec) {
  Clock c;
  c.source = "the record durations";
  if (!known(run.first_timestamp_s) || !known(run.last_timestamp_s)) return c;
  const TimedStamps stamps = timed_stamps(run, rec);
  if (!stamps.all_stamped || stamps.size == 0) return c;
  const std::span<double> ts(stamps.values.get(), stamps.size);
  c.resolution = stamps.whole ? 1.0 : 0.0;
  c.base = ts.front();
  const double last_stamp = ts.back();
  bool moved_back = false;
  if (!correct_timestamps(run, rec, c, ts, moved_back)) return c;
  const std::size_t first = next_timed(rec, 0);
  const double first_start = ts.front() - rec.time[first] * rec.count(first);
  // A correction that moved the clock back makes the log's earliest and latest timestamps
  // ambiguous: the wall clock then starts with the first step and ends with the last.
  c.start = moved_back ? first_start : std::min(run.first_timestamp_s - c.base, first_start);
  // The latest record, not the last one: records a little out of clock order (within the
  // tolerance) must not end the wall clock before it starts.
  // Lines after the last record extend the wall clock by their distance from it.
  c.end = *std::max_element(ts.begin(), ts.end());
  const double after_last = run.last_timestamp_s - last_stamp;
  if (!moved_back && after_last > 0) c.end = std::max(c.end, ts.back() + after_last);
  if (moved_back)
    c.warnings.push_back(
        "after the clock correction, the wall time runs from the first step to the last "
        "(set-up before and teardown after them are not measured)");
  c.use = true;
  c.source = "the log's timestamps";
  lay_out(rec, ts, c);
  return c;
}

}  // namespace mfu::detail
