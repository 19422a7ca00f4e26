// RL post-training logs: veRL's step lines (real excerpts, tests/data/README.md gives their
// provenance; the samples of ../shared/samples-next/verl where they exist) and the rollout
// bucket that generation lands in, for veRL and for DeepSpeed-Chat. Values by hand from the
// lines.
#include <gtest/gtest.h>

#include "mfu/analysis.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

mfu::Run read(const std::string& name) {
  return ingest({test::test_data(name).string()});
}

double bucket_seconds(const Analysis& a, BucketId id) {
  const Bucket* b = a.bucket(id);
  return b ? b->seconds : 0.0;
}

// verl-project/verl issue #1208 (GH200, SGLang rollout), step 2: gen 74.020 + old_log_prob 3.566
// + ref 3.420 + adv 1.167 = 82.173 s of rollout, update_actor 14.302 s, step 96.551 s; the 0.076 s
// left is no stage's. It prints perf/mfu/actor:1.018, which no GPU can reach.
TEST(VerlParser, SplitsAStepIntoRolloutAndTraining) {
  const mfu::Run r = read("verl_issue1208_gh200_step2.log");
  EXPECT_EQ(r.format, "verl");
  ASSERT_EQ(r.iterations.size(), 1u);
  const Iteration it = r.iterations[0];
  EXPECT_EQ(it.step, 2);
  EXPECT_EQ(it.rank, -1);  // "(TaskRunner pid=16292)" is a process, not a rank
  EXPECT_DOUBLE_EQ(it.time_s, 96.551);
  EXPECT_NEAR(it.at(Phase::kGenerate), 82.173, 1e-9);
  EXPECT_NEAR(it.at(Phase::kForwardBackward), 14.302, 1e-9);
  EXPECT_TRUE(test::has_diagnostic(r, "perf/mfu/actor above 100%"));
  const Analysis a = analyze(r, {});
  EXPECT_NEAR(bucket_seconds(a, BucketId::kGeneration), 82.173, 1e-6);
  EXPECT_NEAR(bucket_seconds(a, BucketId::kCompute), 14.302, 1e-6);  // peak unknown: timed compute
  EXPECT_NEAR(bucket_seconds(a, BucketId::kOther), 96.551 - 82.173 - 14.302, 1e-6);
}

// rllm-org/rllm issue #54 (a veRL fork, early 2025: "mfu/actor" without "perf/"): gen 100.108 +
// old_log_prob 5.331 + ref 5.201 + adv 11.197 = 121.837 s and update_actor 20.278 s add up to
// 142.115 s, more than timing_s/step 131.608: the overlap is said, rollout first, training the
// rest (9.771 s).
TEST(VerlParser, SaysWhenItsStageTimersOverlap) {
  const mfu::Run r = read("verl_rllm_issue54_step4.log");
  EXPECT_EQ(r.format, "verl");
  ASSERT_EQ(r.iterations.size(), 1u);
  EXPECT_NEAR(r.iterations[0].at(Phase::kGenerate), 121.837, 1e-9);
  EXPECT_TRUE(test::has_diagnostic(r, "stage timers add up to 142.1 s"));
  EXPECT_FALSE(test::has_diagnostic(r, "above 100%"));  // 0.387 is possible
  const Analysis a = analyze(r, {});
  EXPECT_NEAR(bucket_seconds(a, BucketId::kGeneration), 121.837, 1e-6);
  EXPECT_NEAR(bucket_seconds(a, BucketId::kCompute), 131.608 - 121.837, 1e-6);
}

// verl-project/verl issue #2060: the validation line of step 0 and a training line whose
// timers are cut off: one training record, untimed, and no MFU made up.
TEST(VerlParser, AStepWithoutItsTimerIsUntimedAndValidationIsNoStep) {
  const mfu::Run r = read("verl_issue2060_untimed.log");
  EXPECT_EQ(r.format, "verl");
  ASSERT_EQ(r.iterations.size(), 1u);
  EXPECT_EQ(r.iterations[0].step, 1);
  EXPECT_FALSE(known(r.iterations[0].time_s));
  EXPECT_TRUE(analyze(r, {}).untimed);
}

// samples-next/verl PROVENANCE. johnson7788's GRPO run on one GPU, step 1: step 48.7025 s,
// rollout gen 16.2275 + reward 0.4242 + old_log_prob 10.2759 + adv 0.0734 = 27.0010 s, update
// 21.5221 s, 159,906 tokens at 3283.32 tokens/s per GPU -> 159906 / (3283.32 * 48.7025) = 1.000
// GPU. GUI-Cursor-Moving's 8-GPU run: no "gen" stage but its own rollout loop
// (get_batch_rollout_with_filtering 313.91 s at step 1), throughput 321.42 -> 8.000 GPUs; with
// N = 2e9 and a 989 TFLOP/s peak, MFU = 6 N (2,740,470 + 2,838,007) / (989e12 * 8 * (1065.773 +
// 1041.856)) = 0.4014%.
TEST(VerlParser, ReadsTheSamples) {
  const std::string one = test::next_sample("verl", "johnson7788");
  const std::string eight = test::next_sample("verl", "yuzhaouoe");
  if (one.empty() || eight.empty())
    MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/verl is not here");
  const mfu::Run r1 = ingest({one});
  EXPECT_EQ(r1.format, "verl");
  ASSERT_EQ(r1.iterations.size(), 1u);  // step 0 is validation only
  const Iteration s1 = r1.iterations[0];
  EXPECT_DOUBLE_EQ(s1.time_s, 48.7025266494602);
  EXPECT_NEAR(s1.at(Phase::kGenerate),
              16.22749171219766 + 0.42415859922766685 + 10.275943230837584 + 0.07341944053769112,
              1e-9);
  EXPECT_NEAR(s1.at(Phase::kForwardBackward), 21.522068275138736, 1e-9);
  EXPECT_DOUBLE_EQ(s1.tokens, 159906);
  EXPECT_EQ(r1.meta.number("gpus"), 1);

  const mfu::Run r8 = ingest({eight});
  ASSERT_EQ(r8.iterations.size(), 2u);
  EXPECT_EQ(r8.meta.number("gpus"), 8);
  EXPECT_DOUBLE_EQ(r8.iterations[0].time_s, 1065.7729346989654);
  EXPECT_NEAR(r8.iterations[0].at(Phase::kGenerate),
              313.9077237630263 + 0.00026335427537560463 + 174.7384607680142 + 0.032002163119614124,
              1e-9);
  AnalyzeOptions opt;
  ModelShape m;
  m.id = "custom";
  m.params = 2e9;
  opt.model = m;
  opt.peak_flops = 989e12;
  const Analysis a = analyze(r8, opt);
  ASSERT_TRUE(a.mfu.has_value());
  EXPECT_NEAR(
      *a.mfu,
      6 * 2e9 * (2740470.0 + 2838007.0) / (989e12 * 8 * (1065.7729346989654 + 1041.8559710769914)),
      1e-9);
}

// A validation and a save inside a step (test_freq, save_freq): timing_s/step 45 holds testing 8
// and save_checkpoint 4, so the evaluation and the checkpoint buckets get 8 s and 4 s, rollout
// 10 s, training 20 s, and 45 - 8 - 4 - 10 - 20 = 3 s no stage's; the wall time stays 2 x 45 s.
TEST(VerlParser, TestingAndSavingInsideAStepAreTheirOwnBuckets) {
  const std::string text =
      "step:4 - actor/pg_loss:0.1 - timing_s/gen:10 - timing_s/update_actor:20 - "
      "timing_s/step:33\n"
      "step:5 - actor/pg_loss:0.1 - timing_s/gen:10 - timing_s/update_actor:20 - "
      "timing_s/testing:8 - timing_s/save_checkpoint:4 - timing_s/step:45\n";
  const mfu::Run r = ingest_text(text, "verl.log");
  ASSERT_EQ(r.iterations.size(), 2u);
  EXPECT_DOUBLE_EQ(r.iterations[1].time_s, 33);
  ASSERT_EQ(r.events.size(), 2u);
  const Analysis a = analyze(r, {});
  EXPECT_NEAR(a.wall_time_s, 33 + 45, 1e-9);
  EXPECT_NEAR(bucket_seconds(a, BucketId::kEval), 8, 1e-9);
  EXPECT_NEAR(bucket_seconds(a, BucketId::kCheckpoint), 4, 1e-9);
  EXPECT_NEAR(bucket_seconds(a, BucketId::kGeneration), 20, 1e-9);
  EXPECT_NEAR(bucket_seconds(a, BucketId::kOther), 3 + 3, 1e-9);
}

// DeepSpeed-Chat's step 3 (tests/data/dschat_rlhf_excerpt.log): "Generate time=5.26s", 2.78 s
// and 2.79 s are the rollout: 10.83 s in its own bucket, not unattributed.
TEST(RolloutBucket, DeepSpeedChatGenerationIsRollout) {
  const Analysis a = analyze(read("dschat_rlhf_excerpt.log"), {});
  EXPECT_NEAR(bucket_seconds(a, BucketId::kGeneration), 5.26 + 2.78 + 2.79, 1e-6);
  EXPECT_EQ(a.bucket(BucketId::kGeneration)->source, BucketSource::kMeasured);
}

}  // namespace
}  // namespace mfu
