// DeepSpeed as it prints by default (no wall_clock_breakdown): the engine's "step=N, skipped=K"
// lines timed by their timestamps, the throughput timer, and the PipelineEngine's "steps: N ...
// iter time (s)" lines. Real excerpts (tests/data/README.md) and the samples of
// ../shared/samples-next/deepspeed where they exist; values by hand from the lines.
#include <gtest/gtest.h>

#include <cmath>

#include "mfu/ingest.hpp"
#include "test_util.hpp"
#include "text.hpp"

namespace mfu {
namespace {

// deepspeedai/DeepSpeed issue #1825: DeepSpeed under the Hugging Face Trainer in a notebook, HTML
// objects between the lines, the pre-2022 throughput timer "0/40, SamplesPerSec=...". Steps 40,
// 50, 60 at 02:06:58,985, 02:07:14,130 and 02:07:29,274: 15.145 s and 15.144 s for 10 steps each.
TEST(DeepSpeedDefault, EngineStepLinesAreTimedByTheirTimestamps) {
  const mfu::Run r = ingest({test::test_data("deepspeed_issue1825_notebook_steps.log").string()});
  EXPECT_EQ(r.format, "deepspeed");
  ASSERT_EQ(r.iterations.size(), 3u);
  EXPECT_EQ(r.iterations[0].step, 40);
  EXPECT_FALSE(known(r.iterations[0].time_s));  // nothing before it to time it by
  EXPECT_EQ(r.iterations[1].count, 10u);
  EXPECT_NEAR(r.iterations[1].time_s, 15.145 / 10, 1e-6);
  EXPECT_NEAR(r.iterations[2].time_s, 15.144 / 10, 1e-6);
  EXPECT_TRUE(test::has_diagnostic(r, "2 of the first 60 optimizer steps were skipped"));
}

// samples-next/deepspeed, DeepSpeed-Chat step 2 (OPT-350m reward model, global batch 64 by the
// file's name): steps 10 and 20 at 03:36:02,682 and 03:36:05,686, 0.3004 s a step; the
// throughput timer's CurrSamplesPerSec=213.49 says 64 / 213.49 = 0.2998 s for the last step,
// a second clock that must agree within 1%. 1840 steps, 20 skipped.
TEST(DeepSpeedDefault, TimestampsAgreeWithTheThroughputTimer) {
  const std::string path =
      test::next_sample("deepspeed", "deepspeedai_DeepSpeedExamples_dschat_step2");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/deepspeed is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "deepspeed");
  ASSERT_EQ(r.iterations.size(), 184u);
  EXPECT_EQ(r.iterations[1].step, 20);
  EXPECT_NEAR(r.iterations[1].time_s, 3.004 / 10, 1e-6);
  EXPECT_NEAR(r.iterations[1].time_s, 64 / 213.49183724272422, 0.01 * r.iterations[1].time_s);
  EXPECT_EQ(r.iterations.back().step, 1840);
  EXPECT_TRUE(test::has_diagnostic(r, "20 of the first 1840 optimizer steps were skipped"));
}

// samples-next/deepspeed, GPT-NeoX's README (mosaicml/llm-foundry): a wall-clock timer line, then
// "steps: 30 loss: 10.7133 iter time (s): 0.283 samples/sec: 226.457": one step record of
// 0.283 s, global batch 226.457 x 0.283 = 64.09 -> 64. The timer line sums over the steps since
// the previous print, which this log does not show: its timers are not taken as one step's
// (forward 519 ms + backward 1815 ms would be 8 times the step).
TEST(DeepSpeedDefault, PipelineEngineLineIsTheStep) {
  const std::string path = test::next_sample("deepspeed", "mosaicml_llm-foundry");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/deepspeed is not here");
  const mfu::Run r = ingest({path});
  ASSERT_EQ(r.iterations.size(), 1u);
  const Iteration it = r.iterations[0];
  EXPECT_EQ(it.step, 30);
  EXPECT_DOUBLE_EQ(it.time_s, 0.283);
  EXPECT_DOUBLE_EQ(it.samples, 64);
  EXPECT_NEAR(it.loss, 10.7133, 1e-6);
  EXPECT_FALSE(known(it.at(Phase::kForward)));
  EXPECT_EQ(r.meta.number("global_batch"), 64);
}

// Two prints of a PipelineEngine run with wall_clock_breakdown, steps_per_print 10: the second
// timer line sums 10 steps (forward 1000 ms, backward 2500 ms, step 50 ms), so the step at 20
// gets 0.1 s, 0.25 s and 5 ms per step; its iter time 0.4 s is the mean of the 10.
TEST(DeepSpeedDefault, PipelineTimersBecomeMeansPerStep) {
  const std::string text =
      "[2024-01-01 00:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] rank=0 time (ms) | "
      "forward: 900.00 | backward: 2400.00 | step: 40.00\n"
      "[2024-01-01 00:00:00,100] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, "
      "lr=[1e-4], mom=[[0.9, 0.95]]\n"
      "steps: 10 loss: 9.0000 iter time (s): 0.390 samples/sec: 82.051\n"
      "[2024-01-01 00:00:04,000] [INFO] [logging.py:96:log_dist] [Rank 0] rank=0 time (ms) | "
      "forward: 1000.00 | backward: 2500.00 | step: 50.00\n"
      "[2024-01-01 00:00:04,100] [INFO] [logging.py:96:log_dist] [Rank 0] step=20, skipped=0, "
      "lr=[1e-4], mom=[[0.9, 0.95]]\n"
      "steps: 20 loss: 8.5000 iter time (s): 0.400 samples/sec: 80.000\n";
  const mfu::Run r = ingest_text(text, "pipe.log");
  EXPECT_EQ(r.format, "deepspeed");
  ASSERT_EQ(r.iterations.size(), 2u);
  EXPECT_DOUBLE_EQ(r.iterations[0].time_s, 0.39);
  EXPECT_FALSE(known(r.iterations[0].at(Phase::kForward)));  // the interval is not known yet
  const Iteration it = r.iterations[1];
  EXPECT_DOUBLE_EQ(it.time_s, 0.4);
  EXPECT_EQ(it.count, 10u);
  EXPECT_NEAR(it.at(Phase::kForward), 0.1, 1e-12);
  EXPECT_NEAR(it.at(Phase::kBackward), 0.25, 1e-12);
  EXPECT_NEAR(it.at(Phase::kOptimizer), 0.005, 1e-12);
  EXPECT_DOUBLE_EQ(it.samples, 32);  // 80 x 0.4
}

// "step=" lines before richer ones (DeepSpeed-Chat prints the engine's step 0 before its own
// throughput lines): the stand-ins give way, so no step is counted twice.
TEST(DeepSpeedDefault, StepLinesGiveWayToRicherRecords) {
  const std::string text =
      "[2025-01-02 15:46:55,967] [INFO] [logging.py:128:log_dist] [Rank 0] step=1, skipped=0, "
      "lr=[5e-05, 5e-05], mom=[(0.9, 0.95), (0.9, 0.95)]\n"
      "Model Parameters: 0.331 B, Latency: 0.27s, TFLOPs: 1.02, Samples/sec: 7.28, Time/seq "
      "0.14s, Batch Size: 2, Sequence Length: 512\n"
      "Model Parameters: 0.331 B, Latency: 0.49s, TFLOPs: 0.57, Samples/sec: 4.06, Time/seq "
      "0.25s, Batch Size: 2, Sequence Length: 512\n"
      "[2025-01-02 15:46:58,967] [INFO] [logging.py:128:log_dist] [Rank 0] step=10, skipped=0, "
      "lr=[5e-05, 5e-05], mom=[(0.9, 0.95), (0.9, 0.95)]\n";
  const mfu::Run r = ingest_text(text, "chat.log");
  ASSERT_EQ(r.iterations.size(), 2u);
  EXPECT_DOUBLE_EQ(r.iterations[0].time_s, 0.27);
  EXPECT_DOUBLE_EQ(r.iterations[1].time_s, 0.49);
}

// samples-next/deepspeed, Megatron-DeepSpeed with pipeline parallelism (liguodongiot/llm-action):
// it prints Megatron-DeepSpeed's iteration lines and the PipelineEngine's beside them; the
// iteration lines win (TFLOPs), and the two readings of one log (its PipelineEngine lines alone)
// agree: iteration 1 4220.8 ms
// against steps 1 4.218 s, 2: 1346.3 ms / 1.337 s, 2500: 1206.4 ms / 1.200 s (within 1%).
TEST(DeepSpeedDefault, MegatronDeepSpeedPrintsBothAndTheyAgree) {
  const std::string path = test::next_sample("deepspeed", "liguodongiot");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/deepspeed is not here");
  const mfu::Run mega = ingest({path});
  EXPECT_EQ(mega.format, "megatron");
  // The PipelineEngine's reading: its own lines alone.
  std::string pipeline_lines;
  const std::string whole = test::read_file(path);
  for (const auto& line : detail::split(whole, '\n'))
    if (line.rfind("steps: ", 0) == 0) pipeline_lines += std::string(line) + "\n";
  const mfu::Run pipe = ingest_text(pipeline_lines, "pipeline.log");
  EXPECT_EQ(pipe.format, "deepspeed");
  auto at = [](const mfu::Run& r, std::int64_t step) {
    for (std::size_t i = 0; i < r.iterations.size(); ++i)
      if (r.iterations[i].step == step) return r.iterations[i].time_s;
    return kUnknown;
  };
  const double megatron_ms[] = {4220.8, 1346.3, 1206.4};
  const double pipeline_s[] = {4.218, 1.337, 1.200};
  const std::int64_t steps[] = {1, 2, 2500};
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(at(mega, steps[k]), megatron_ms[k] / 1000, 1e-9) << steps[k];
    EXPECT_NEAR(at(pipe, steps[k]), pipeline_s[k], 1e-9) << steps[k];
    EXPECT_NEAR(at(pipe, steps[k]), at(mega, steps[k]), 0.01 * at(mega, steps[k])) << steps[k];
  }
}

// wall_clock_breakdown on a plain engine prints the step line first and its timers after: the
// timers' record keeps the step the engine printed (10), not one past the stand-in it replaces.
TEST(DeepSpeedDefault, TimerLinesAfterAStepLineKeepItsStep) {
  const std::string text =
      "[2024-01-01 00:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, "
      "lr=[1e-4], mom=[[0.9, 0.95]]\n"
      "[2024-01-01 00:00:00,001] [INFO] [logging.py:96:log_dist] [Rank 0] rank=0 time (ms) | "
      "forward: 100.00 | backward: 200.00 | step: 10.00\n"
      "[2024-01-01 00:00:03,100] [INFO] [logging.py:96:log_dist] [Rank 0] step=20, skipped=0, "
      "lr=[1e-4], mom=[[0.9, 0.95]]\n"
      "[2024-01-01 00:00:03,101] [INFO] [logging.py:96:log_dist] [Rank 0] rank=0 time (ms) | "
      "forward: 100.00 | backward: 200.00 | step: 10.00\n";
  const mfu::Run r = ingest_text(text, "engine.log");
  EXPECT_EQ(r.format, "deepspeed");
  ASSERT_EQ(r.iterations.size(), 2u);
  EXPECT_EQ(r.iterations[0].step, 10);
  EXPECT_EQ(r.iterations[1].step, 20);
  EXPECT_NEAR(r.iterations[0].time_s, 0.31, 1e-12);
}

}  // namespace
}  // namespace mfu
