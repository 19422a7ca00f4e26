// mfu check: each threshold just below, at and just above its limit; the baseline comparison
// with realistic jitter; the JUnit file parsed back.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <regex>
#include <sstream>

#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/gate.hpp"
#include "mfu/ingest.hpp"

namespace mfu {
namespace {

/// A native run of `n` steps of 35 TFLOP on 16 GPUs (peak 19.5T) with normal jitter.
mfu::Run jittered(int n, double mean_s, double jitter, std::uint64_t seed, double flops = 3.5e13) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, jitter);
  std::ostringstream s;
  s << R"({"type":"meta","gpus":16})"
    << "\n";
  for (int i = 1; i <= n; ++i) {
    const double t = mean_s * (1.0 + noise(rng));
    s << R"({"step":)" << i << R"(,"time_s":)" << t << R"(,"model_flops":)" << flops
      << R"(,"tokens":131072,"phases":{"comm_s":)" << 0.08 * mean_s / 0.33 << "}}\n";
  }
  return ingest_text(s.str(), "run.jsonl");
}

Analysis analyze_it(const mfu::Run& r) {
  AnalyzeOptions o;
  o.peak_flops = 19.5e12;
  return analyze(r, o);
}

/// The classic example, 20 identical steps: steady MFU 33.99%, step 330 ms, comm 80/330.
struct Fixture {
  mfu::Run run = jittered(20, 0.330, 0.0, 1);
  Analysis a = analyze_it(run);
};

// Returns a copy: callers pass a temporary GateResult, so a reference would dangle.
CheckResult only(const GateResult& r) {
  EXPECT_EQ(r.checks.size(), 1u);
  return r.checks.empty() ? CheckResult{} : r.checks.front();
}

TEST(Gate, MinMfuJustBelowAtAndAbove) {
  Fixture f;
  const double m = *f.a.mfu_steady;
  for (auto [limit, pass] :
       {std::pair{m - 1e-4, true}, std::pair{m, true}, std::pair{m + 1e-4, false}}) {
    GateOptions o;
    o.min_mfu = limit;
    const GateResult r = evaluate_gate(f.a, f.run, o);
    EXPECT_EQ(only(r).passed, pass) << limit;
    EXPECT_EQ(r.passed, pass);
  }
}

TEST(Gate, MaxStepTimeJustBelowAtAndAbove) {
  Fixture f;
  for (auto [limit, pass] :
       {std::pair{0.3299, false}, std::pair{0.330, true}, std::pair{0.3301, true}}) {
    GateOptions o;
    o.max_step_time_s = limit;
    EXPECT_EQ(only(evaluate_gate(f.a, f.run, o)).passed, pass) << limit;
  }
}

TEST(Gate, MinTokensPerSecondJustBelowAtAndAbove) {
  Fixture f;
  const double tps = *f.a.tokens_per_s;  // 131072 / 0.33
  for (auto [limit, pass] :
       {std::pair{tps * 0.999, true}, std::pair{tps, true}, std::pair{tps * 1.001, false}}) {
    GateOptions o;
    o.min_tokens_per_s = limit;
    EXPECT_EQ(only(evaluate_gate(f.a, f.run, o)).passed, pass) << limit;
  }
}

TEST(Gate, MaxBucketJustBelowAtAndAbove) {
  Fixture f;
  const double comm = f.a.bucket("comm")->fraction;  // 0.08 / 0.33
  EXPECT_NEAR(comm, 0.08 / 0.33, 1e-7);
  for (auto [limit, pass] :
       {std::pair{comm - 1e-6, false}, std::pair{comm, true}, std::pair{comm + 1e-6, true}}) {
    GateOptions o;
    o.max_bucket["comm"] = limit;
    const CheckResult c = only(evaluate_gate(f.a, f.run, o));
    EXPECT_EQ(c.passed, pass) << limit;
    EXPECT_EQ(c.bucket, "comm");
  }
  GateOptions bad;
  bad.max_bucket["network"] = 0.1;
  EXPECT_THROW((void)evaluate_gate(f.a, f.run, bad), Error);
}

TEST(Gate, MinGoodputJustBelowAtAndAbove) {
  Fixture f;
  const double gp = *f.a.goodput;
  for (auto [limit, pass] :
       {std::pair{gp - 1e-6, true}, std::pair{gp, true}, std::pair{gp + 1e-6, false}}) {
    GateOptions o;
    o.min_goodput = limit;
    EXPECT_EQ(only(evaluate_gate(f.a, f.run, o)).passed, pass) << limit;
  }
}

TEST(Gate, UnknownMfuAndTooShortRunsNeverPass) {
  const mfu::Run r = jittered(20, 0.33, 0.0, 1);
  const Analysis no_peak = analyze(r, AnalyzeOptions{});
  GateOptions o;
  o.min_mfu = 0.01;
  const GateResult g = evaluate_gate(no_peak, r, o);
  EXPECT_FALSE(g.passed);
  EXPECT_NE(g.checks.front().message.find("unknown"), std::string::npos);
  EXPECT_FALSE(g.cannot_judge.empty());  // neither a pass nor a failure: exit 2
  const mfu::Run tiny = jittered(3, 0.33, 0.0, 1);
  GateOptions any;
  any.max_step_time_s = 10.0;
  EXPECT_FALSE(evaluate_gate(analyze_it(tiny), tiny, any).passed);
}

Baseline baseline_of(const Analysis& a) {
  Baseline b;
  b.mfu_steady = a.mfu_steady;
  b.tokens_per_s = a.tokens_per_s;
  b.tokens_per_s_per_gpu = a.tokens_per_s_per_gpu;
  b.step_time_median_s = a.step_time.median;
  b.step_times_s = a.steady_step_times_s;
  b.mfu_sample = a.steady_mfu_sample;
  b.tokens_per_s_per_gpu_sample = a.steady_tokens_per_s_per_gpu_sample;
  return b;
}

TEST(Gate, BaselineRegressionOfTenPercentIsDetected) {
  // Realistic jitter: 2% standard deviation per step, 200 steps each.
  const mfu::Run base = jittered(200, 0.330, 0.02, 11);
  const mfu::Run slow = jittered(200, 0.330 * 1.10, 0.02, 12);
  GateOptions o;
  o.baseline = baseline_of(analyze_it(base));
  o.max_regression = 0.05;
  const GateResult r = evaluate_gate(analyze_it(slow), slow, o);
  EXPECT_FALSE(r.passed);
  ASSERT_TRUE(r.regression);
  EXPECT_NEAR(r.regression->drop, 1 - 1 / 1.10, 0.01);  // MFU falls by 9.1%
  EXPECT_TRUE(r.regression->significant);
  EXPECT_GT(r.regression->ci_low, 0.05);  // the whole interval of the drop is beyond 5%
  EXPECT_LT(r.regression->p_value, 1e-6);
}

TEST(Gate, BaselineDifferenceOfOnePercentWithJitterIsNotFlagged) {
  const mfu::Run base = jittered(200, 0.330, 0.02, 21);
  const mfu::Run slower = jittered(200, 0.330 * 1.01, 0.02, 22);
  GateOptions o;
  o.baseline = baseline_of(analyze_it(base));
  o.max_regression = 0.05;
  const GateResult r = evaluate_gate(analyze_it(slower), slower, o);
  EXPECT_TRUE(r.passed) << r.checks.front().message;
}

TEST(Gate, ADropAboveTheLimitButInsideTheNoisePassesUnlessStrict) {
  // 6% slower, but 15 steps with 15% jitter: not distinguishable from the noise.
  const mfu::Run base = jittered(15, 0.330, 0.15, 31, 5e12);
  const mfu::Run slower = jittered(15, 0.330 * 1.06, 0.15, 32, 5e12);
  GateOptions o;
  o.baseline = baseline_of(analyze_it(base));
  o.max_regression = 0.01;
  const Analysis a = analyze_it(slower);
  const GateResult r = evaluate_gate(a, slower, o);
  ASSERT_TRUE(r.regression);
  ASSERT_GT(r.regression->drop, 0.01);
  EXPECT_FALSE(r.regression->significant);
  EXPECT_TRUE(r.passed) << r.checks.front().message;
  o.strict = true;
  EXPECT_FALSE(evaluate_gate(a, slower, o).passed);
}

TEST(Gate, BaselineSampleTakesEveryStrideThSteadyRecord) {
  // 12,001 steps of 300,000 + 10 (i mod 97) us on 16 GPUs: more than 5,000 steady records, so
  // the sample keeps steady records 0, s, 2s, ... with s = ceil(count / 5000). With w warm-up
  // records count = 12,001 - w, and s = 3 for any w up to 2,000 (10,001 <= count <= 15,000).
  constexpr int kSteps = 12001;
  auto micros = [](int i) { return 300000 + 10 * (i % 97); };
  std::string text = "{\"type\":\"meta\",\"gpus\":16}\n";
  for (int i = 0; i < kSteps; ++i) {
    text.append(R"({"step":)").append(std::to_string(i + 1));
    text.append(R"(,"time_us":)").append(std::to_string(micros(i)));
    text.append(R"(,"model_flops":3.5e13})").append("\n");
  }
  const mfu::Run run = ingest_text(text, "run.jsonl");
  const Analysis a = analyze_it(run);
  ASSERT_EQ(a.record_flags.size(), static_cast<std::size_t>(kSteps));
  std::vector<int> steady;
  for (int i = 0; i < kSteps; ++i)
    if (!(a.record_flags[i] & (kRecordLost | kRecordWarmup | kRecordOutlier))) steady.push_back(i);
  ASSERT_GE(steady.size(), 10001u);
  ASSERT_LE(steady.size(), 15000u);
  std::vector<double> want;
  for (std::size_t k = 0; k < steady.size(); k += 3) want.push_back(micros(steady[k]) * 1e-6);
  EXPECT_EQ(a.steady_step_times_s, want);
  // MFU of each sampled step: 3.5e13 / (19.5e12 x 16 x t).
  ASSERT_EQ(a.steady_mfu_sample.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k)
    EXPECT_DOUBLE_EQ(a.steady_mfu_sample[k], 3.5e13 / (19.5e12 * 16 * want[k])) << k;
}

TEST(Gate, MannWhitneyMatchesAHandComputedCase) {
  // a = {4,5,6}, b = {1,2,3}: U = 9 (every a beats every b); n1 = n2 = 3, mean 4.5, var 5.25;
  // z = (9 - 4.5 - 0.5)/sqrt(5.25) = 1.7457, one-sided p = 1 - Phi(1.7457) = 0.0404.
  EXPECT_NEAR(mann_whitney_greater({4, 5, 6}, {1, 2, 3}), 0.0404, 5e-4);
  // Reversed: U = 0, z = (0 - 4.5 - 0.5)/sqrt(5.25) = -2.1822, p = 0.9855.
  EXPECT_NEAR(mann_whitney_greater({1, 2, 3}, {4, 5, 6}), 0.9855, 5e-4);
}

TEST(Gate, JunitReportParsesBackWithItsFailures) {
  Fixture f;
  GateOptions o;
  o.min_mfu = 0.5;
  o.max_bucket["comm"] = 0.5;
  const GateResult r = evaluate_gate(f.a, f.run, o);
  std::ostringstream x;
  render_junit(r, f.a, x);
  const std::string s = x.str();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      s, m, std::regex(R"re(<testsuite name="mfu check" tests="(\d+)" failures="(\d+)")re")));
  EXPECT_EQ(m[1].str(), "2");
  EXPECT_EQ(m[2].str(), "1");
  const std::regex testcase(R"re(<testcase classname="mfu.check" name="([^"]+)">)re");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), testcase); it != std::sregex_iterator();
       ++it)
    names.push_back((*it)[1].str());
  EXPECT_EQ(names, (std::vector<std::string>{"min-mfu", "max-bucket comm"}));
  ASSERT_TRUE(
      std::regex_search(s, m, std::regex(R"re(<failure message="([^"]+)" type="threshold">)re")));
  EXPECT_NE(m[1].str().find("MFU (steady state) 33.99% &lt; 50.00%"), std::string::npos)
      << m[1].str();
  EXPECT_EQ(std::count(s.begin(), s.end(), '<'), std::count(s.begin(), s.end(), '>'));
}

TEST(Gate, GithubAnnotationsEscapeAndMarkFailures) {
  Fixture f;
  GateOptions o;
  o.min_mfu = 0.5;
  std::ostringstream x;
  render_github_annotations(evaluate_gate(f.a, f.run, o), x);
  // '%' is escaped as %25 in workflow commands.
  EXPECT_EQ(
      x.str().rfind("::error title=mfu check min-mfu::MFU (steady state) 33.99%25 < 50.00%25", 0),
      0u)
      << x.str();
}

TEST(Gate, BaselineFileMustBeAnMfuReport) {
  EXPECT_THROW((void)parse_baseline("{}", "b.json"), Error);
  EXPECT_THROW((void)parse_baseline("not json", "b.json"), Error);
  // A version far beyond int range is "newer", not an undefined double-to-int cast.
  EXPECT_THROW((void)parse_baseline(R"({"schema_version":1e300})", "b.json"), Error);
  const Baseline b = parse_baseline(
      R"({"schema_version":1,"mfu_steady":0.4,"step_time_s":{"median":0.3},"step_time_sample_s":[0.3,0.31]})",
      "b.json");
  EXPECT_DOUBLE_EQ(*b.mfu_steady, 0.4);
  EXPECT_EQ(b.step_times_s.size(), 2u);
}

}  // namespace
}  // namespace mfu
