// Stage 3: which records describe the steady state. Restarts throw work away; impossible
// records are left out; warm-up ends where the step time settles; stalls are steady records
// above median + 3 sigma (sigma = 1.4826 MAD).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/parallel.hpp"
#include "analysis/select.hpp"
#include "analysis/stages.hpp"
#include "mfu/error.hpp"
#include "mfu/units.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

constexpr std::uint8_t kLeftOut = kRecordLost | kRecordOutlier;

/// A record more than this many times faster than the median cannot be a step (asynchronous
/// dispatch timing, a unit error): it is left out.
constexpr double kFasterThanMedian = 10.0;

/// Iterations after the restored step were thrown away: a step going back restarts a segment.
void mark_restarts(const Run& run, Records& rec, Steady& st) {
  const IterationTable& T = run.iterations;
  for (std::size_t i = 1; i < rec.flags.size(); ++i) {
    if (!(rec.flags[i] & kRecordSegmentStart)) continue;
    const std::int64_t restored = T.step(i) - static_cast<std::int64_t>(rec.count(i));
    for (std::size_t j = i; j-- > 0;) {
      if (T.step(j) <= restored) break;
      rec.flags[j] |= kRecordLost;
      st.steps_lost += rec.count(j);
      if (rec.flags[j] & kRecordSegmentStart) break;
    }
    ++st.restarts;
  }
}

/// The distribution of rec.time over the records keep(i) selects, weighted by their counts
/// (plain values when every record covers as many iterations).
template <class Keep>
Distribution time_distribution(const Records& rec, Keep keep, bool tails) {
  const std::size_t n = rec.time.size();
  if (known(rec.uniform_count)) {
    auto times = [&](std::size_t lo, std::size_t hi, auto&& f) {
      for (std::size_t i = lo; i < hi; ++i)
        if (keep(i)) f(rec.time[i]);
    };
    return distribution_of(make_source(times, n, rec.threads), rec.uniform_count, tails);
  }
  std::vector<Weighted> w;
  w.reserve(rec.timed);
  for (std::size_t i = 0; i < n; ++i)
    if (keep(i)) w.push_back({rec.time[i], static_cast<double>(rec.count(i))});
  return distribution(std::move(w), tails);
}

/// The step-time distribution (with its tails) of the timed records without any of the
/// `skip` flags.
Distribution level_of(const Records& rec, std::uint8_t skip) {
  return time_distribution(
      rec, [&](std::size_t i) { return !std::isnan(rec.time[i]) && !(rec.flags[i] & skip); }, true);
}

/// The impossible records one part of the records holds.
struct OutlierPart {
  std::size_t above_peak = 0, too_fast = 0, candidates = 0, outliers = 0;
  std::vector<std::string> first_lines;  ///< of the part's first kOutlierLines
};
constexpr std::size_t kOutlierLines = 5;

/// The model FLOPs of one iteration of every record, when they cannot differ from record to
/// record: the work comes from the log's own count, the model or a flag (not from a rate times
/// the record's time), and the columns flops() reads (tokens, samples, the log's FLOPs) each
/// hold one value. Then the outlier pass reads the times alone (on a 1 GiB native log it spent
/// 95 ms reading whole records for the same number 5.6M times).
std::optional<double> same_flops_for_all(const Run& run, const WorkPlan& work) {
  if (work.source == WorkSource::kFramework || work.source == WorkSource::kNone)
    return std::nullopt;
  Iteration it;
  for (const auto& [field, value] : {std::pair{RecordFields::kTokens, &it.tokens},
                                     {RecordFields::kSamples, &it.samples},
                                     {RecordFields::kModelFlops, &it.model_flops}}) {
    const std::optional<double> v = run.iterations.uniform(field);
    if (!v) return std::nullopt;
    *value = *v;
  }
  validate(it);
  return work.flops(it, kUnknown);
}

void mark_outliers_in(const Run& run, const Resolved& r, const WorkPlan& work, double median,
                      std::optional<double> same_flops, std::size_t lo, std::size_t hi,
                      Records& rec, OutlierPart& part) {
  const bool can_ideal = known(r.peak) && known(r.work_gpus) && work.source != WorkSource::kNone;
  // Judges record i, whose FLOPs flops_at(t) gives for its time t.
  const auto judge = [&](std::size_t i, auto&& flops_at) {
    const double t = rec.time[i];
    if (std::isnan(t) || (rec.flags[i] & kRecordLost)) return;
    ++part.candidates;
    bool bad = known(median) && t * kFasterThanMedian < median;
    if (bad) ++part.too_fast;
    if (!bad && can_ideal) {
      const double f = flops_at(t);
      bad = known(f) && f / (r.peak * r.work_gpus) > t * (1 + 1e-9);
      if (bad) ++part.above_peak;
    }
    if (!bad) return;
    rec.flags[i] |= kRecordOutlier;
    rec.time[i] = kUnknown;
    if (++part.outliers <= kOutlierLines) part.first_lines.push_back(record_location(run, i));
  };
  if (same_flops) {
    for (std::size_t i = lo; i < hi; ++i) judge(i, [&](double) { return *same_flops; });
    return;
  }
  for_each_validated_in(
      run.iterations, lo, hi,
      [&](std::size_t i, const Iteration& it) {
        judge(i, [&](double t) { return work.flops(it, t); });
      },
      RecordFields::kWork);
}

/// Leaves out the impossible records, judged against `median`, the median step of the records
/// not already left out.
void mark_outliers(const Run& run, const Resolved& r, const WorkPlan& work, double median,
                   Records& rec, Steady& st, const Analysis& a) {
  const Parts parts = parts_of(rec.time.size(), rec.threads, kPartsPerThread);
  std::vector<OutlierPart> found(parts.size());
  const std::optional<double> same_flops = same_flops_for_all(run, work);
  run_parts(parts, [&](std::size_t p, std::size_t lo, std::size_t hi) {
    OutlierPart part;  // on this thread's stack until the part is done (run_parts)
    mark_outliers_in(run, r, work, median, same_flops, lo, hi, rec, part);
    found[p] = std::move(part);
  });
  std::size_t above_peak = 0, too_fast = 0, candidates = 0;
  std::string first_lines;
  std::size_t listed = 0;
  for (const OutlierPart& part : found) {
    above_peak += part.above_peak;
    too_fast += part.too_fast;
    candidates += part.candidates;
    st.outliers += part.outliers;
    for (const std::string& where : part.first_lines)
      if (listed++ < kOutlierLines) first_lines.append(1, ' ').append(where);
  }
  // The rule: a run is refused when more than half of its records are impossible; fewer are
  // outliers, left out with a warning.
  if (2 * above_peak > candidates)
    throw ImpossibleResult(
        fmt::format("{} of {} records would run above 100% of the peak (MFU above 100% is "
                    "impossible); inputs: {}",
                    above_peak, candidates, inputs_list(a)),
        "check the GPU count (all GPUs of the job), the accelerator or its dense peak per GPU, "
        "and the model or the tokens per step");
  if (st.outliers > 0)
    st.warnings.push_back(fmt::format(
        "{} records left out as impossible ({} faster than the peak allows, {} over {}x faster "
        "than the median step {}):{}",
        st.outliers, above_peak, too_fast, kFasterThanMedian, format_duration(median),
        first_lines));
}

/// settle_index over `count` values, at(k) giving the k-th (asked in rising k, a few ahead).
template <class At>
std::size_t settle_index_of(std::size_t count, At&& at, double level, double tol) {
  const std::size_t max_k = count / 2;
  auto near = [&](double t) { return std::fabs(t - level) <= tol; };
  for (std::size_t k = 0; k < max_k; ++k) {
    if (!near(at(k))) continue;
    // Settled: this record and the median of the next few are at the steady pace.
    const std::size_t w = std::min<std::size_t>(5, count - k);
    std::array<double, 5> win{};
    for (std::size_t j = 0; j < w; ++j) win[j] = at(k + j);
    std::nth_element(win.begin(), win.begin() + static_cast<std::ptrdiff_t>(w / 2),
                     win.begin() + static_cast<std::ptrdiff_t>(w));
    if (near(win[w / 2])) return k;
  }
  return max_k;
}

/// Marks the warm-up of the segment [s, e) found from its timed records not left out; returns
/// the records marked. The records' positions are listed only as far as the scan looks (a
/// warm-up is usually a few records; a copy of the segment's times cost 2 x 8 B a record).
std::size_t mark_settling(Records& rec, std::size_t s, std::size_t e, double level, double tol) {
  if (!known(level)) return 0;
  auto counts = [&](std::size_t j) {
    return !std::isnan(rec.time[j]) && !(rec.flags[j] & kLeftOut);
  };
  std::size_t count = 0;
  for (std::size_t j = s; j < e; ++j) count += counts(j) ? 1 : 0;
  std::vector<std::size_t> at_record;
  std::size_t next = s;
  auto at = [&](std::size_t k) {
    while (at_record.size() <= k) {
      while (!counts(next)) ++next;
      at_record.push_back(next++);
    }
    return rec.time[at_record[k]];
  };
  const std::size_t k = settle_index_of(count, at, level, tol);
  std::size_t marked = 0;
  for (std::size_t j = s; j < e && marked < k; ++j)
    if (counts(j)) {
      rec.flags[j] |= kRecordWarmup;
      ++marked;
    }
  return marked;
}

/// Marks each segment's warm-up; returns the records marked.
std::size_t mark_warmup(const Run& run, const AnalyzeOptions& opt, Records& rec, double level,
                        double sigma) {
  std::size_t marked = 0;
  const IterationTable& T = run.iterations;
  const std::size_t n = rec.flags.size();
  const double tol = std::max(kSigmas * sigma, 0.10 * level);
  for (std::size_t s = 0; s < n;) {
    std::size_t e = s + 1;
    while (e < n && !(rec.flags[e] & kRecordSegmentStart)) ++e;
    if (opt.warmup) {
      const std::int64_t first = T.step(s) - static_cast<std::int64_t>(rec.count(s));
      for (std::size_t j = s; j < e && T.step(j) - first <= *opt.warmup; ++j, ++marked)
        rec.flags[j] |= kRecordWarmup;
    } else {
      marked += mark_settling(rec, s, e, level, tol);
    }
    s = e;
  }
  return marked;
}

/// Do the stalls recur every N steps, and is N the save or evaluation interval?
void find_period(const Run& run, const std::vector<std::int64_t>& stall_steps, Steady& st) {
  if (stall_steps.size() < 3) return;
  std::map<std::int64_t, int> diffs;
  for (std::size_t i = 1; i < stall_steps.size(); ++i) ++diffs[stall_steps[i] - stall_steps[i - 1]];
  auto best = std::max_element(diffs.begin(), diffs.end(),
                               [](auto& x, auto& y) { return x.second < y.second; });
  if (best->first <= 1 || best->second < 2 ||
      best->second < static_cast<int>(0.6 * static_cast<double>(stall_steps.size() - 1)))
    return;
  st.period_steps = best->first;
  for (const char* key : {"save_interval", "eval_interval", "log_interval"}) {
    // The stalls' period is this interval exactly (a multiple would not explain the others).
    if (auto v = run.meta.number(key); v && as_count(*v) == best->first) {
      st.period_cause = fmt::format("{} {}", key, best->first);
      return;
    }
  }
}

/// The steady step-time distribution: of the records neither left out nor warm-up, or of all
/// not left out when everything is warm-up. `level` is the latter, already computed; it is
/// the former too when no record is warm-up (the same records: no pass needed).
void steady_distribution(Records& rec, const Distribution& level, std::size_t warmup, Steady& st) {
  const auto skip = static_cast<std::uint8_t>(kLeftOut | kRecordWarmup);
  if (warmup > 0)
    st.step_time = time_distribution(
        rec, [&](std::size_t i) { return !std::isnan(rec.time[i]) && !(rec.flags[i] & skip); },
        true);
  if (warmup == 0 || st.step_time.count == 0) st.step_time = level;
  st.median = st.step_time.median;
  st.sigma = kMadToSigma * st.step_time.mad;
  // A floor of 1% of the median: step times printed to a few digits have no finer resolution.
  st.stall_threshold = st.median + std::max(kSigmas * st.sigma, 0.01 * st.median);
}

/// The median of each phase timer over the steady records, one phase at a time through one
/// buffer (a buffer per phase held 4 x 16 B per record at once on a 4-timer log).
void timer_medians(const Run& run, const Records& rec, Steady& st) {
  const IterationTable& T = run.iterations;
  auto steady = [&](std::size_t i) {
    return !std::isnan(rec.time[i]) && !(rec.flags[i] & (kLeftOut | kRecordWarmup | kRecordStall));
  };
  std::vector<Weighted> v;
  for (std::size_t p = 0; p < kPhaseCount; ++p) {
    st.timer_median[p] = 0.0;
    const auto phase = static_cast<Phase>(p);
    if (!T.has_phase(phase)) continue;
    if (const std::optional<int> scale = T.decimal_scale(phase);
        scale && known(rec.uniform_count)) {
      // Timers held as decimals: selected on their digits (a missing or negative timer has
      // negative digits, which the selection leaves out as valid_phase does).
      auto digits = [&](std::size_t lo, std::size_t hi, auto&& f) {
        std::array<std::int32_t, kRecordBlock> block;
        for (std::size_t first = lo; first < hi; first += kRecordBlock) {
          const std::size_t n = std::min(kRecordBlock, hi - first);
          T.read_digits(phase, *scale, first, n, block.data());
          for (std::size_t k = 0; k < n; ++k)
            if (steady(first + k)) f(block[k]);
        }
      };
      const double m = median_of_keys(
          make_source(digits, T.size(), rec.threads),
          [&](std::int32_t d) { return IterationTable::timer_of_digits(d, *scale); });
      if (known(m)) st.timer_median[p] = m;
      continue;
    }
    if (known(rec.uniform_count)) {
      // Every record covers as many iterations: selection over the column, no buffer.
      auto timers = [&](std::size_t lo, std::size_t hi, auto&& f) {
        std::array<double, kRecordBlock> block;
        for (std::size_t first = lo; first < hi; first += kRecordBlock) {
          const std::size_t n = std::min(kRecordBlock, hi - first);
          T.read(phase, first, n, block.data());
          for (std::size_t k = 0; k < n; ++k)
            if (steady(first + k) && valid_phase(block[k])) f(block[k]);
        }
      };
      const double m = median_from(make_source(timers, T.size(), rec.threads));
      if (known(m)) st.timer_median[p] = m;
      continue;
    }
    v.clear();
    if (v.capacity() == 0) v.reserve(rec.timed);
    for (std::size_t i = 0; i < rec.time.size(); ++i) {
      const double x = T.phase(i, phase);
      if (steady(i) && valid_phase(x)) v.push_back({x, static_cast<double>(rec.count(i))});
    }
    if (!v.empty()) st.timer_median[p] = weighted_quantile(v, 0.5);
  }
}

}  // namespace

std::size_t settle_index(const std::vector<double>& times, double level, double tol) {
  std::vector<double> v;
  for (double t : times)
    if (!std::isnan(t)) v.push_back(t);
  return settle_index_of(
      v.size(), [&](std::size_t k) { return v[k]; }, level, tol);
}

Steady find_steady(const Run& run, const Resolved& r, const WorkPlan& work,
                   const AnalyzeOptions& opt, Records& rec, const Analysis& a) {
  Steady st;
  mark_restarts(run, rec, st);
  Distribution level = level_of(rec, kLeftOut);
  mark_outliers(run, r, work, level.median, rec, st, a);
  if (st.outliers > 0) level = level_of(rec, kLeftOut);  // else the same records
  const std::size_t warmup = mark_warmup(run, opt, rec, level.median, kMadToSigma * level.mad);
  steady_distribution(rec, level, warmup, st);
  std::vector<std::int64_t> stall_steps;
  for (std::size_t i = 0; i < rec.time.size(); ++i) {
    if (std::isnan(rec.time[i]) || (rec.flags[i] & (kLeftOut | kRecordWarmup))) continue;
    if (rec.time[i] > st.stall_threshold) {
      rec.flags[i] |= kRecordStall;
      stall_steps.push_back(run.iterations.step(i));
    }
  }
  find_period(run, stall_steps, st);
  timer_medians(run, rec, st);
  return st;
}

}  // namespace mfu::detail
