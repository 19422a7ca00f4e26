// Stage 9: the finished buckets (cost, energy, what removing each would add to MFU), the
// fixes worth most, and the mean steady step split that mfu whatif scales.
#include <algorithm>
#include <cmath>

#include "analysis/parallel.hpp"
#include "analysis/stages.hpp"

namespace mfu::detail {

void fill_buckets_and_fixes(const AnalyzeOptions& opt, const Totals& t, Analysis& a) {
  const double G = a.gpus;
  a.buckets = t.waterfall.buckets(a.wall_time_s, G);
  if (!a.mfu)
    for (auto& b : a.buckets)
      if (b.name == bucket_key(B::kCompute)) b.label = "compute (peak or FLOPs unknown)";
  for (auto& b : a.buckets) {
    if (opt.price_per_gpu_hour && known(G)) b.cost = b.gpu_hours * *opt.price_per_gpu_hour;
    if (a.tdp_w && known(G)) b.energy_kwh = b.gpu_hours * *a.tdp_w / 1000.0;
    if (a.mfu && b.name != bucket_key(B::kCompute) && b.seconds < a.mfu_time_s)
      b.mfu_gain = *a.mfu * a.mfu_time_s / (a.mfu_time_s - b.seconds) - *a.mfu;
  }
  if (opt.price_per_gpu_hour && known(G)) a.total_cost = a.gpu_hours * *opt.price_per_gpu_hour;
  if (a.tdp_w && known(G)) a.total_energy_kwh = a.gpu_hours * *a.tdp_w / 1000.0;
  std::vector<const Bucket*> avoidable;
  // "Unattributed" is what nothing measured, not a cause to fix: the report says instead what
  // would attribute it.
  for (const auto& b : a.buckets)
    if (b.name != bucket_key(B::kCompute) && b.name != bucket_key(B::kOther) &&
        b.seconds > 1e-6 * a.wall_time_s)
      avoidable.push_back(&b);
  std::sort(avoidable.begin(), avoidable.end(),
            [](const Bucket* x, const Bucket* y) { return x->seconds > y->seconds; });
  for (std::size_t i = 0; i < avoidable.size() && a.fixes.size() < 3; ++i) {
    const Bucket* b = avoidable[i];
    const auto id = bucket_from_key(b->name);
    a.fixes.push_back(
        Fix{b->name, b->label, b->seconds, b->mfu_gain, id ? bucket_info(*id).advice : ""});
  }
  // The mean steady step, stalls included: the same "steady" as analyze's steady MFU.
  if (t.steady_weight > 0) {
    a.steady_step_count = t.steady_weight;
    for (std::size_t b = 0; b < kBucketCount; ++b)
      if (t.steady_split[b] > 0)
        a.steady_step_split_s[bucket_key(static_cast<B>(b))] = t.steady_split[b] / t.steady_weight;
  }
}

namespace {

/// Steady records' step times, MFU and tokens/s per GPU, at most 5000 evenly spaced: what a
/// baseline comparison estimates the per-step noise from.
void steady_samples(const Run& run, const WorkPlan& work, const Records& rec, Analysis& a) {
  constexpr std::uint8_t kNotSteady = kRecordLost | kRecordOutlier | kRecordWarmup;
  auto steady = [&](std::size_t i) {
    return !std::isnan(rec.time[i]) && !(rec.flags[i] & kNotSteady);
  };
  // Two passes (count, then every stride-th) rather than a list of all steady records' indices;
  // the count on all threads (a sum of integers: the same on any number).
  const Parts parts = parts_of(rec.time.size(), rec.threads);
  std::vector<std::size_t> part_count(parts.size(), 0);
  run_parts(parts, [&](std::size_t p, std::size_t lo, std::size_t hi) {
    std::size_t c = 0;
    for (std::size_t i = lo; i < hi; ++i) c += steady(i) ? 1 : 0;
    part_count[p] = c;
  });
  std::size_t count = 0;
  for (const std::size_t c : part_count) count += c;
  const std::size_t stride = std::max<std::size_t>(1, (count + 4999) / 5000);
  const double PG = a.peak_flops_per_gpu * work.gpus;
  // Steady records 0, stride, 2 stride, ... of the count, by a countdown: `k % stride` divided
  // once per record of the run, serially (5.6M 64-bit divisions on the 1 GiB native file).
  for (std::size_t i = 0, until_next = 0; i < rec.time.size(); ++i) {
    if (!steady(i)) continue;
    if (until_next-- != 0) continue;
    until_next = stride - 1;
    const double t = rec.time[i];
    a.steady_step_times_s.push_back(t);
    const Iteration it = validated(run.iterations[i]);
    const double f = work.flops(it, t), tokens = work.tokens(it);
    if (known(f) && known(PG)) a.steady_mfu_sample.push_back(f / (PG * t));
    if (known(tokens) && known(work.gpus))
      a.steady_tokens_per_s_per_gpu_sample.push_back(tokens / (t * work.gpus));
  }
}

/// The slowest record of [first, first + stride) (the first of equals); `first` when none is
/// timed.
std::size_t slowest_in(const Records& rec, std::size_t first, std::size_t stride) {
  const std::size_t end = std::min(rec.time.size(), first + stride);
  std::size_t pick = first;
  for (std::size_t j = first; j < end; ++j)
    if (!std::isnan(rec.time[j]) && (std::isnan(rec.time[pick]) || rec.time[j] > rec.time[pick]))
      pick = j;
  return pick;
}

}  // namespace

void fill_series(const Run& run, const WorkPlan& work, const Records& rec, const Steady& st,
                 Totals& t, Analysis& a) {
  a.stalls = std::move(t.stalls);
  a.stalls.threshold_s = st.stall_threshold;
  a.stalls.period_steps = st.period_steps;
  a.stalls.period_cause = st.period_cause;
  std::sort(a.stalls.worst.begin(), a.stalls.worst.end(),
            [](const Stall& x, const Stall& y) { return x.excess_s > y.excess_s; });
  if (a.stalls.worst.size() > 10) a.stalls.worst.resize(10);
  a.restarts = st.restarts;
  a.steps_lost = st.steps_lost;
  a.outlier_records = st.outliers;
  a.step_time = st.step_time;
  a.record_flags.assign(rec.flags.begin(), rec.flags.end());
  const std::size_t n = rec.time.size();
  steady_samples(run, work, rec, a);
  // Series for charts: at most ~2000 points, keeping each block's slowest record (the first of
  // equals). Each block is picked on its own, so the blocks are picked on all threads.
  const std::size_t stride = std::max<std::size_t>(1, (n + 1999) / 2000);
  const std::size_t blocks = (n + stride - 1) / stride;
  std::vector<std::size_t> picks(blocks);
  // A thread picks the blocks that start in its part of the records.
  run_parts(parts_of(n, rec.threads), [&](std::size_t, std::size_t lo, std::size_t hi) {
    for (std::size_t b = (lo + stride - 1) / stride; b < blocks && b * stride < hi; ++b)
      picks[b] = slowest_in(rec, b * stride, stride);
  });
  for (const std::size_t pick : picks) {
    if (std::isnan(rec.time[pick])) continue;
    const Iteration it = validated(run.iterations[pick]);
    SeriesPoint p;
    p.step = it.step;
    p.time_s = rec.time[pick];
    // The analysis' own count, with the FLOPs a record gets from its configuration.
    p.mfu = work.flops(it, p.time_s) / (a.peak_flops_per_gpu * work.gpus * p.time_s);
    p.tokens_per_s = work.tokens(it) / p.time_s;
    p.phase = it.phase;
    p.stall = rec.flags[pick] & kRecordStall;
    p.warmup = rec.flags[pick] & kRecordWarmup;
    a.series.push_back(p);
  }
}

}  // namespace mfu::detail
