// The analysis' passes over the records run on several threads (src/analysis/parallel.hpp).
// The reference is the same analysis on one thread, where every pass walks the records in
// order: on generated runs of every class the passes must handle (restarts, outliers, warm-up,
// stalls, events inside and between steps, invalid fields, records of several iterations, a
// clock), the whole JSON report is the same bit for bit on 2, 3 and 8 threads. The runs hold
// 3 x 2^16 + 12,345 records, so that 2 and 3 threads cut them in different places, and put a
// restart, an outlier, invalid fields and events right at the cuts.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include "analysis/stages.hpp"
#include "mfu/analysis.hpp"
#include "mfu/gpu.hpp"
#include "mfu/report.hpp"
#include "mfu/run.hpp"

namespace mfu {
namespace {

constexpr std::size_t kBlock = std::size_t{1} << 16;  // kParallelBlock
constexpr std::size_t kRecords = 3 * kBlock + 12345;

struct Variant {
  bool timestamps = false;        // a clock: gaps between steps, events placed on it
  bool multi_count = false;       // some records stand for 10 iterations
  bool flops_in_records = false;  // else the FLOPs per step come as an input
  unsigned seed = 0;
};

/// Seeds 1-4: with and without a clock, records of 1 and of 10 iterations, FLOPs in the
/// records or as an input.
Variant variant(unsigned seed) {
  Variant v;
  v.seed = seed;
  v.timestamps = seed % 2 == 0;
  v.multi_count = seed >= 3;
  v.flops_in_records = seed % 2 == 1;
  return v;
}

/// A record near one of the cuts of 2 or 3 threads (block 1, 2 or 3 starts there).
bool near_cut(std::size_t i) {
  const std::size_t d = i % kBlock;
  return i >= kBlock && (d < 3 || d > kBlock - 3);
}

Run generate(const Variant& v) {
  std::mt19937 rng(v.seed);
  std::uniform_real_distribution<double> u(0, 1);
  Run run;
  run.format = "mfu-jsonl";
  run.inputs = {"generated.jsonl"};
  double clock = 1.7e9;
  std::int64_t step = 0;
  for (std::size_t i = 0; i < kRecords; ++i) {
    Iteration it;
    it.line = static_cast<std::uint32_t>(i + 2);
    it.count = v.multi_count && u(rng) < 0.05 ? 10 : 1;
    // Restarts: a step going back, two of them at a cut.
    const bool restart = i == kBlock || i == 2 * kBlock + 1 || i == 100000;
    step = restart ? step - 50 : step + it.count;
    it.step = step;
    double t = 1.0 + 0.02 * (u(rng) - 0.5);
    if (i % 1000 < 20) t += 0.5 * (20 - static_cast<double>(i % 1000)) / 20;  // warm-up-like
    if (u(rng) < 0.002 || i == 2 * kBlock) t += 5 + 10 * u(rng);              // stalls
    if (u(rng) < 0.0005 || i == 3 * kBlock - 1) t = 0.01;                     // outliers
    it.time_s = t;
    it.tokens = 524288;
    if (v.flops_in_records) it.model_flops = 2.0e16 * (u(rng) < 0.01 ? 0.5 : 1.0);
    it.at(Phase::kForward) = 0.3 * t;
    it.at(Phase::kBackward) = 0.6 * t;
    it.at(Phase::kComm) = 0.08 + 0.01 * u(rng);
    it.at(Phase::kData) = i % 7 == 0 ? kUnknown : 0.002 * u(rng);
    // Invalid fields ("-1" for not measured, a zero time): warnings capped at 8 in all.
    if (near_cut(i) || u(rng) < 0.0002) it.at(Phase::kData) = -1;
    if (i % 40000 == 39999) it.time_s = 0;
    clock += t * it.count + (u(rng) < 0.01 ? 3 * u(rng) : 0.0);
    if (v.timestamps) it.timestamp_s = clock;
    run.iterations.push_back(it);
    // Checkpoints: some between steps with a duration, some without, some at a cut.
    if (i % 20000 == 777 || i + 1 == 2 * kBlock) {
      Event e;
      e.kind = EventKind::kCheckpointSave;
      e.step = step;
      e.line = it.line;
      e.duration_s = i % 40000 == 777 ? kUnknown : 4.0 + u(rng);
      if (v.timestamps) {
        clock += 5.0;
        e.timestamp_s = clock;
      }
      run.events.push_back(e);
    }
  }
  if (v.timestamps) {
    run.first_timestamp_s = 1.7e9 - 30;
    run.last_timestamp_s = clock + 10;
  }
  run.meta.set("save_interval", 20000.0, "generated");
  return run;
}

AnalyzeOptions options(unsigned threads, const Variant& v) {
  AnalyzeOptions o;
  o.gpu = "h100-sxm";
  o.gpus = 64;
  if (!v.flops_in_records) o.flops_per_step = 2.0e16;
  o.threads = threads;
  return o;
}

std::string report(const Run& run, unsigned threads, const Variant& v) {
  const AnalyzeOptions o = options(threads, v);
  std::ostringstream out;
  RenderOptions ro;
  render_analysis(analyze(run, o), run, OutputFormat::kJson, ro, out);
  return out.str();
}

/// Where two reports first differ, with some context (a whole-report diff would be huge).
std::string first_difference(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = i > 80 ? i - 80 : 0;
  return "at byte " + std::to_string(i) + ":\n  1 thread: " + a.substr(from, 160) +
         "\n  threads:  " + b.substr(from, 160);
}

TEST(ParallelAnalysis, ThreadsGiveTheOneThreadReportBitForBit) {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    const Variant v = variant(seed);
    const mfu::Run run = generate(v);
    const std::string one = report(run, 1, v);
    // The run is what it should test: restarts, outliers, stalls, warnings were found.
    ASSERT_NE(one.find("\"restarts\": 3"), std::string::npos) << one.substr(0, 2000);
    ASSERT_NE(one.find("invalid fields"), std::string::npos);
    ASSERT_NE(one.find("left out as impossible"), std::string::npos);
    for (unsigned threads : {2u, 3u, 8u}) {
      const std::string got = report(run, threads, v);
      EXPECT_TRUE(got == one) << "seed " << seed << ", " << threads << " threads, "
                              << first_difference(one, got);
    }
  }
}

// The chart series against a pick written out here: each block of ceil(n / 2000) records gives
// its slowest timed record (the first of equals; outliers are not timed), from the records'
// own times; the same points on 1, 2, 3 and 8 threads (the blocks are picked on all threads).
TEST(ParallelAnalysis, SeriesIsTheSlowestRecordOfEachBlockOnAnyThreads) {
  for (unsigned seed = 1; seed <= 2; ++seed) {
    const Variant v = variant(seed);
    const mfu::Run run = generate(v);
    const Analysis one = analyze(run, options(1, v));
    const std::size_t n = run.iterations.size(), stride = (n + 1999) / 2000;
    std::vector<std::pair<std::int64_t, double>> want;
    for (std::size_t first = 0; first < n; first += stride) {
      std::size_t pick = n;
      double slowest = 0;
      for (std::size_t j = first; j < std::min(n, first + stride); ++j) {
        const Iteration it = detail::validated(run.iterations[j]);
        if (std::isnan(it.time_s) || (one.record_flags[j] & kRecordOutlier)) continue;
        if (pick == n || it.time_s > slowest) {
          pick = j;
          slowest = it.time_s;
        }
      }
      if (pick < n) want.emplace_back(run.iterations[pick].step, slowest);
    }
    ASSERT_GT(want.size(), 1000u);
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
      const Analysis a = threads == 1 ? one : analyze(run, options(threads, v));
      ASSERT_EQ(a.series.size(), want.size()) << threads;
      for (std::size_t k = 0; k < want.size(); ++k) {
        ASSERT_EQ(a.series[k].step, want[k].first) << threads << " threads, point " << k;
        ASSERT_EQ(a.series[k].time_s, want[k].second) << threads << " threads, point " << k;
      }
    }
  }
}

/// Relative closeness of two sums of the same terms added in another order: a sum of n terms
/// added one by one is off by at most about n x 2^-53 of the sum of their magnitudes (Higham,
/// Accuracy and Stability of Numerical Algorithms, 2nd ed., section 4.2): 2.1e5 records give
/// 2.3e-11; the bound is 1e-10 (the terms here are all positive).
void expect_close(double blocked, double walked, const char* what) {
  EXPECT_NEAR(blocked, walked, 1e-10 * std::max(1.0, std::fabs(walked))) << what;
}

// The second code path for the attribution: the records walked in one block, one by one in
// order (what every run of up to 2^16 records gets), against the blocks walked on their own
// and added up. Sums may differ in the last bits (another order of addition); counts, the
// per-iteration MFU and the waterfall's parts may not.
TEST(ParallelAnalysis, BlocksAddUpToTheWalkInOneBlock) {
  using namespace detail;
  for (unsigned seed = 1; seed <= 4; ++seed) {
    const Variant v = variant(seed);
    const mfu::Run run = generate(v);
    const AnalyzeOptions o = options(2, v);
    const Resolved r = resolve_inputs(run, o, GpuDatabase::builtin());
    Analysis a;
    Records rec = read_records(run, 2);
    const WorkPlan work = plan_work(run, r, rec, a);
    const Steady st = find_steady(run, r, work, o, rec, a);
    const Clock clock = plan_clock(run, rec);
    const EventPlan ev = plan_events(run, rec, st, clock);
    const Totals walked = attribute(run, r, work, rec, st, clock, ev, rec.time.size());
    const Totals blocked = attribute(run, r, work, rec, st, clock, ev);
    EXPECT_EQ(blocked.iterations_total, walked.iterations_total);
    EXPECT_EQ(blocked.iterations_steady, walked.iterations_steady);
    EXPECT_EQ(blocked.iterations_warm, walked.iterations_warm);
    EXPECT_EQ(blocked.capped, walked.capped);
    EXPECT_EQ(blocked.flops_filled, walked.flops_filled);
    EXPECT_EQ(blocked.flops_left_out, walked.flops_left_out);
    EXPECT_EQ(blocked.timers_over, walked.timers_over);
    EXPECT_EQ(blocked.stalls.count, walked.stalls.count);
    ASSERT_GT(walked.stalls.count, 10u);
    expect_close(blocked.stalls.excess_s, walked.stalls.excess_s, "stall excess");
    for (const auto& [bucket, s] : walked.stalls.excess_by_bucket)
      expect_close(blocked.stalls.excess_by_bucket.at(bucket), s, bucket.c_str());
    expect_close(blocked.flops_kept, walked.flops_kept, "flops_kept");
    expect_close(blocked.flops_steady, walked.flops_steady, "flops_steady");
    expect_close(blocked.time_steady, walked.time_steady, "time_steady");
    expect_close(blocked.tokens_all, walked.tokens_all, "tokens_all");
    expect_close(blocked.tokens_steady, walked.tokens_steady, "tokens_steady");
    expect_close(blocked.productive, walked.productive, "productive");
    expect_close(blocked.warm_time, walked.warm_time, "warm_time");
    expect_close(blocked.steady_weight, walked.steady_weight, "steady_weight");
    for (std::size_t b = 0; b < kBucketCount; ++b)
      expect_close(blocked.steady_split[b], walked.steady_split[b], "steady split");
    const auto wb = walked.waterfall.buckets(1.0, 64), bb = blocked.waterfall.buckets(1.0, 64);
    ASSERT_EQ(bb.size(), wb.size());
    for (std::size_t b = 0; b < wb.size(); ++b) {
      expect_close(bb[b].seconds, wb[b].seconds, wb[b].name.c_str());
      EXPECT_EQ(bb[b].source, wb[b].source) << wb[b].name;
    }
    // The slowest stalls: the same steps (their excesses differ, so no tie decides).
    ASSERT_EQ(blocked.stalls.worst.size(), walked.stalls.worst.size());
    ASSERT_EQ(blocked.mfu_per_iteration.size(), walked.mfu_per_iteration.size());
    for (std::size_t i = 0; i < walked.mfu_per_iteration.size(); ++i) {
      const WeightedF x = walked.mfu_per_iteration.at(i), y = blocked.mfu_per_iteration.at(i);
      ASSERT_TRUE((std::isnan(x.value) && std::isnan(y.value)) ||
                  (x.value == y.value && x.weight == y.weight))
          << "slot " << i;
    }
  }
}

}  // namespace
}  // namespace mfu
