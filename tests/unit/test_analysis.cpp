// mfu::analyze on small crafted runs whose every number is computed by hand here.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "mfu/inputs.hpp"

namespace mfu {
namespace {

/// The classic worked example as a native log: 16 GPUs of 19.5 TFLOP/s, 35 TFLOP per step,
/// 330 ms per step = forward 100 + backward 150 + gradient sync 80 ms.
std::string classic_log(int steps, const std::string& extra = "") {
  std::ostringstream s;
  s << R"({"type":"meta","gpus":16})"
    << "\n";
  for (int i = 1; i <= steps; ++i) {
    s << R"({"step":)" << i
      << R"(,"time_s":0.330,"model_flops":3.5e13,"tokens":131072,"phases":{"forward_s":0.100,"backward_s":0.150,"comm_s":0.080,"data_s":0.0}})"
      << "\n";
  }
  s << extra;
  return s.str();
}

AnalyzeOptions peak_19_5() {
  AnalyzeOptions o;
  o.peak_flops = 19.5e12;
  return o;
}

double bucket(const Analysis& a, const char* name) {
  return a.bucket(name)->seconds;
}

TEST(Analysis, ClassicExampleHeadlineNumbersByHand) {
  const mfu::Run run = ingest_text(classic_log(10), "classic.jsonl");
  const Analysis a = analyze(run, peak_19_5());
  const double ideal = 35e12 / (16 * 19.5e12);  // 0.112179 s of each 0.330 s step
  EXPECT_NEAR(*a.mfu, ideal / 0.330, 1e-7);     // 34.0%
  EXPECT_NEAR(*a.mfu * 100, 34.0, 0.05);
  EXPECT_NEAR(*a.mfu_steady, *a.mfu, 1e-12);
  EXPECT_NEAR(a.wall_time_s, 3.3, 1e-9);
  EXPECT_NEAR(*a.achieved_flops_per_s_per_gpu, 35e12 / (16 * 0.330), 1e6);
  EXPECT_NEAR(*a.tokens_per_s, 131072 / 0.330, 1e-6);
  EXPECT_NEAR(a.step_time.median, 0.330, 1e-7);
  EXPECT_EQ(a.iterations_total, 10u);
  EXPECT_EQ(a.warmup_iterations, 0u);
  EXPECT_EQ(a.stalls.count, 0u);
  // Waterfall: compute at peak, forward+backward above it, the measured sync, nothing else.
  EXPECT_NEAR(bucket(a, "compute"), 10 * ideal, 1e-6);
  EXPECT_NEAR(bucket(a, "compute_inefficiency"), 10 * (0.250 - ideal), 1e-6);
  EXPECT_NEAR(bucket(a, "comm"), 10 * 0.080, 1e-6);
  EXPECT_NEAR(bucket(a, "other"), 0.0, 1e-6);
  EXPECT_EQ(a.bucket("comm")->source, BucketSource::kMeasured);
  double sum = 0;
  for (const auto& b : a.buckets) sum += b.seconds;
  EXPECT_NEAR(sum, a.wall_time_s, 1e-9);
  // Halving the sync (what mfu whatif projects) is worth 38.7%: here the largest avoidable
  // bucket is the compute below peak, then communication.
  EXPECT_EQ(a.fixes.front().bucket, "compute_inefficiency");
  EXPECT_EQ(a.fixes[1].bucket, "comm");
  EXPECT_NEAR(a.fixes[1].mfu_gain, 0.112179 / (0.330 - 0.080) - ideal / 0.330, 1e-5);
}

TEST(Analysis, CheckpointEventAddsToWallTimeAndGoodput) {
  const mfu::Run run = ingest_text(
      classic_log(10, R"({"type":"event","kind":"checkpoint","step":10,"duration_s":2.0})"
                      "\n"),
      "ckpt.jsonl");
  const Analysis a = analyze(run, peak_19_5());
  EXPECT_NEAR(a.wall_time_s, 5.3, 1e-9);
  EXPECT_NEAR(bucket(a, "checkpoint"), 2.0, 1e-9);
  EXPECT_NEAR(*a.mfu, 10 * 35e12 / (16 * 19.5e12 * 5.3), 1e-7);  // 21.2%
  EXPECT_NEAR(*a.goodput, 3.3 / 5.3, 1e-9);
  EXPECT_EQ(a.fixes.front().bucket, "checkpoint");
  EXPECT_NEAR(a.fixes.front().mfu_gain, *a.mfu * 5.3 / 3.3 - *a.mfu, 1e-7);
}

TEST(Analysis, WarmupAndStallsAreFoundAndPricedByHand) {
  std::ostringstream s;
  s << R"({"type":"meta","gpus":16})"
    << "\n";
  for (int i = 1; i <= 20; ++i) {
    const double t = i == 1 ? 3.0 : (i == 10 ? 0.99 : 0.33);
    s << R"({"step":)" << i << R"(,"time_s":)" << t << R"(,"model_flops":3.5e13})"
      << "\n";
  }
  const Analysis a = analyze(ingest_text(s.str(), "stall.jsonl"), peak_19_5());
  EXPECT_EQ(a.warmup_iterations, 1u);
  EXPECT_NEAR(a.warmup_time_s, 3.0, 1e-9);
  EXPECT_EQ(a.stalls.count, 1u);
  EXPECT_NEAR(a.stalls.excess_s, 0.66, 1e-6);
  EXPECT_EQ(a.stalls.worst.front().step, 10);
  EXPECT_EQ(a.stalls.worst.front().line, 11u);          // the meta line, then step i on line i + 1
  EXPECT_NEAR(bucket(a, "startup"), 3.0 - 0.33, 1e-6);  // warm-up excess over the steady step
  EXPECT_NEAR(bucket(a, "idle"), 0.66, 1e-6);
  EXPECT_NEAR(a.wall_time_s, 3.0 + 0.99 + 18 * 0.33, 1e-9);
  // Steady state: 19 records, one of them the stall.
  EXPECT_NEAR(*a.mfu_steady, 19 * 35e12 / (16 * 19.5e12 * (0.99 + 18 * 0.33)), 1e-7);
  double sum = 0;
  for (const auto& b : a.buckets) sum += b.seconds;
  EXPECT_NEAR(sum, a.wall_time_s, 1e-9);
}

TEST(Analysis, RestartThrowsAwayTheStepsAfterTheRestoredCheckpoint) {
  std::ostringstream s;
  s << R"({"type":"meta","gpus":16})"
    << "\n";
  for (int i = 1; i <= 10; ++i)
    s << R"({"step":)" << i << R"(,"time_s":0.33,"model_flops":3.5e13})"
      << "\n";
  for (int i = 6; i <= 12; ++i)
    s << R"({"step":)" << i << R"(,"time_s":0.33,"model_flops":3.5e13})"
      << "\n";
  const mfu::Run run = ingest_text(s.str(), "restart.jsonl");
  ASSERT_EQ(run.events.size(), 1u);
  EXPECT_EQ(run.events[0].kind, EventKind::kRestart);
  EXPECT_EQ(run.events[0].steps_lost, 5);  // steps 6..10 were done twice
  const Analysis a = analyze(run, peak_19_5());
  EXPECT_EQ(a.restarts, 1u);
  EXPECT_EQ(a.steps_lost, 5);
  EXPECT_NEAR(bucket(a, "restart"), 5 * 0.33, 1e-9);
  EXPECT_NEAR(a.wall_time_s, 17 * 0.33, 1e-9);
  // Only the 12 kept steps count as model work.
  EXPECT_NEAR(*a.mfu, 12 * 35e12 / (16 * 19.5e12 * 17 * 0.33), 1e-7);
  EXPECT_NEAR(*a.goodput, 12.0 / 17.0, 1e-9);
}

TEST(Analysis, PipelineBubbleIsInferredFromStagesAndMicroBatches) {
  // p = 4 stages, m = 12 micro-batches: bubble = 3/15 = 20% of the forward-backward span.
  std::ostringstream s;
  s << R"({"type":"meta","gpus":16,"pp":4})"
    << "\n";
  for (int i = 1; i <= 5; ++i)
    s << R"({"step":)" << i << R"(,"time_s":1.0,"model_flops":1e14})"
      << "\n";
  AnalyzeOptions o = peak_19_5();
  o.micro_batches = 12;
  const Analysis a = analyze(ingest_text(s.str(), "pp.jsonl"), o);
  EXPECT_NEAR(bucket(a, "idle"), 5 * 0.2, 1e-9);
  EXPECT_EQ(a.bucket("idle")->source, BucketSource::kInferred);
}

bool any_contains(const std::vector<std::string>& v, const std::string& part) {
  for (const auto& s : v)
    if (s.find(part) != std::string::npos) return true;
  return false;
}

TEST(Analysis, UnknownGpuGivesStepTimesAndNamesTheMissingInput) {
  const mfu::Run run = ingest_text(classic_log(5), "nogpu.jsonl");
  const Analysis a = analyze(run, AnalyzeOptions{});
  EXPECT_FALSE(a.mfu.has_value());
  EXPECT_NEAR(a.step_time.median, 0.33, 1e-7);
  EXPECT_TRUE(a.tokens_per_s.has_value());
  // The library names the input, not a flag of the CLI...
  EXPECT_TRUE(any_contains(a.unknowns, "give the accelerator"));
  EXPECT_FALSE(any_contains(a.unknowns, "--gpu"));
  EXPECT_TRUE(std::isnan(a.peak_flops_per_gpu));  // never invented
  // ...and a front end phrases it its own way.
  set_input_phrasing([](Input i) { return std::string("--") + input_key(i); });
  const Analysis b = analyze(run, AnalyzeOptions{});
  set_input_phrasing(nullptr);
  EXPECT_TRUE(any_contains(b.unknowns, "give --gpu"));
}

TEST(Analysis, MfuAboveOneHundredPercentIsAnErrorNamingTheInputs) {
  const mfu::Run run = ingest_text(classic_log(5), "wrong.jsonl");
  AnalyzeOptions o;
  o.peak_flops = 1.95e12;  // a peak ten times too small
  try {
    (void)analyze(run, o);
    FAIL() << "an MFU of 340% must not be printed";
  } catch (const ImpossibleResult& e) {
    EXPECT_NE(std::string(e.what()).find("impossible"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("peak"), std::string::npos);
  }
}

TEST(Analysis, FrameworkCountIsUsedAndLabelledWhenTheModelIsUnknown) {
  const std::string log = R"({"type":"meta","gpus":8})"
                          "\n"
                          R"({"step":1,"time_s":1.0,"tflops":300})"
                          "\n"
                          R"({"step":2,"time_s":1.0,"tflops":300})"
                          "\n";
  AnalyzeOptions o;
  o.gpu = "h100-sxm";
  const Analysis a = analyze(ingest_text(log, "fw.jsonl"), o);
  EXPECT_EQ(a.flops_source, "framework");
  EXPECT_NEAR(*a.mfu, 300e12 / 989.5e12, 1e-7);
  EXPECT_NEAR(*a.framework_mfu_steady, 300e12 / 989.5e12, 1e-7);
}

TEST(Analysis, ImpossibleFrameworkCountIsIgnoredWithAWarning) {
  const std::string log = R"({"type":"meta","gpus":1})"
                          "\n"
                          R"({"step":1,"time_s":1.0,"tflops":47000})"
                          "\n"
                          R"({"step":2,"time_s":1.0,"tflops":47000})"
                          "\n";
  AnalyzeOptions o;
  o.gpu = "rtx-5090";
  const Analysis a = analyze(ingest_text(log, "bug.jsonl"), o);
  EXPECT_FALSE(a.mfu.has_value());
  bool warned = false;
  for (const auto& w : a.warnings) warned = warned || w.find("impossible") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(Analysis, TimestampGapsBecomeIdleAndStartupIsMeasured) {
  // Steps end at t = 100 + 1*k s and each takes 1 s, except a 5 s hole before step 4.
  const std::string log =
      R"({"type":"meta","gpus":16})"
      "\n"
      R"({"type":"event","kind":"startup","step":0,"timestamp":90.0,"detail":"launch"})"
      "\n"
      R"({"step":1,"time_s":1.0,"timestamp":101.0,"model_flops":1e13})"
      "\n"
      R"({"step":2,"time_s":1.0,"timestamp":102.0,"model_flops":1e13})"
      "\n"
      R"({"step":3,"time_s":1.0,"timestamp":103.0,"model_flops":1e13})"
      "\n"
      R"({"step":4,"time_s":1.0,"timestamp":109.0,"model_flops":1e13})"
      "\n"
      R"({"step":5,"time_s":1.0,"timestamp":110.0,"model_flops":1e13})"
      "\n";
  const Analysis a = analyze(ingest_text(log, "ts.jsonl"), peak_19_5());
  EXPECT_NEAR(a.wall_time_s, 20.0, 1e-9);  // 90 .. 110
  EXPECT_NEAR(bucket(a, "idle"), 5.0, 1e-9);
  EXPECT_NEAR(bucket(a, "startup"), 10.0, 1e-9);
  EXPECT_EQ(a.bucket("startup")->source,
            BucketSource::kInferred);  // event without a duration in the gap
}

TEST(Analysis, PerIterationHelpersMatchTheHeadline) {
  const mfu::Run run = ingest_text(classic_log(3), "iter.jsonl");
  const Analysis a = analyze(run, peak_19_5());
  EXPECT_NEAR(iteration_mfu(a, run.iterations[0]), *a.mfu, 1e-7);
  EXPECT_NEAR(iteration_model_flops(a, run.iterations[0]), 35e12, 35e5);
  EXPECT_NEAR(iteration_tokens(a, run.iterations[0]), 131072, 1e-9);
}

TEST(Analysis, ARunWithoutTimedIterationsGivesAReportThatSaysSo) {
  const mfu::Run run = ingest_text(R"({"step":1,"loss":2.0})"
                                   "\n",
                                   "untimed.jsonl");
  const Analysis a = analyze(run, peak_19_5());
  EXPECT_FALSE(a.mfu.has_value());
  EXPECT_EQ(a.wall_time_s, 0.0);
  ASSERT_FALSE(a.unknowns.empty());
  EXPECT_NE(a.unknowns.front().find("no timed iterations"), std::string::npos);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

TEST(Analysis, SecondResolutionTimestampsMakeNoSpuriousGaps) {
  // Steps of 3.3 s stamped to the whole second (as Megatron's "[2024-03-30 20:02:40]"): the
  // deltas are 3 or 4 s, but they telescope to the steps' total, so there is no idle gap.
  std::ostringstream s;
  s << R"({"type":"meta","gpus":16})"
    << "\n";
  double clock = 1700000000.0;
  for (int i = 1; i <= 100; ++i) {
    clock += 3.3;
    s << R"({"step":)" << i << R"(,"time_s":3.3,"model_flops":3.5e13,"timestamp":)"
      << static_cast<long long>(std::floor(clock)) << "}\n";
  }
  const Analysis a = analyze(ingest_text(s.str(), "seconds.jsonl"), peak_19_5());
  EXPECT_LT(a.bucket("idle")->seconds, 1.0);  // at most the clock's resolution
  EXPECT_NEAR(*a.mfu, *a.mfu_steady, 0.01 * *a.mfu_steady);
  // A real pause of 60 s between steps 50 and 51 is still found.
  std::ostringstream p;
  p << R"({"type":"meta","gpus":16})"
    << "\n";
  clock = 1700000000.0;
  for (int i = 1; i <= 100; ++i) {
    clock += 3.3 + (i == 51 ? 60.0 : 0.0);
    p << R"({"step":)" << i << R"(,"time_s":3.3,"model_flops":3.5e13,"timestamp":)"
      << static_cast<long long>(std::floor(clock)) << "}\n";
  }
  const Analysis b = analyze(ingest_text(p.str(), "pause.jsonl"), peak_19_5());
  EXPECT_NEAR(b.bucket("idle")->seconds, 60.0, 1.0);
}

}  // namespace
}  // namespace mfu
