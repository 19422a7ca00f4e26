// Parsers over short excerpts of real logs (tests/data/README.md gives their provenance).
#include <gtest/gtest.h>

#include <cmath>

#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

Run read(const std::string& name) {
  return ingest({test::test_data(name).string()});
}

TEST(MegatronParser, ReadsIterationLinesArgumentsAndTimers) {
  const mfu::Run r = read("megatron_megads_excerpt.log");
  EXPECT_EQ(r.format, "megatron");
  ASSERT_EQ(r.iterations.size(), 10u);
  const Iteration first = r.iterations[0];
  EXPECT_EQ(first.step, 10);
  EXPECT_EQ(first.count, 10u);  // one line per log interval of 10
  EXPECT_NEAR(first.time_s, 0.8496, 1e-6);
  EXPECT_NEAR(first.loss, 10.69056, 1e-4);
  EXPECT_DOUBLE_EQ(first.samples, 256);  // global batch size
  // time (ms) | forward-compute: 340.72 | backward-compute: 176.25 | backward-embedding-all-reduce:
  // 0.01 | optimizer: 313.71 | batch-generator: 42.49 ; batch-generator runs inside
  // forward-compute.
  EXPECT_NEAR(first.at(Phase::kData), 0.04249, 1e-6);
  EXPECT_NEAR(first.at(Phase::kForward), 0.34072 - 0.04249, 1e-6);
  EXPECT_NEAR(first.at(Phase::kBackward), 0.17625, 1e-6);
  EXPECT_NEAR(first.at(Phase::kOptimizer), 0.31371, 1e-6);
  EXPECT_NEAR(first.at(Phase::kComm), 0.00001, 1e-9);
  const Iteration second = r.iterations[1];
  EXPECT_EQ(second.count, 10u);
  // consumed tokens 5242880 -> 10485760 over 10 iterations.
  EXPECT_NEAR(second.tokens, 524288, 1e-3);
  EXPECT_EQ(r.meta.number("layers"), 12);
  EXPECT_EQ(r.meta.number("hidden"), 768);
  EXPECT_EQ(r.meta.number("gpus"), 8);
  EXPECT_EQ(r.meta.number("seq_len"), 2048);
  EXPECT_EQ(r.meta.text("dtype"), "fp16");
  EXPECT_NE(r.meta.source("layers").find("megatron_megads_excerpt.log:"), std::string::npos);
  // "time (ms) | load-checkpoint: 1738.10" and the setup timers are events.
  bool load = false, setup = false;
  for (const auto& e : r.events) {
    load =
        load || (e.kind == EventKind::kCheckpointLoad && std::fabs(e.duration_s - 1.7381) < 1e-6);
    setup = setup || (e.kind == EventKind::kStartup && e.detail == "model-and-optimizer-setup");
  }
  EXPECT_TRUE(load);
  EXPECT_TRUE(setup);
  EXPECT_EQ(r.timing, TimingKind::kAveraged);
}

TEST(MegatronParser, ReadsTimestampsAndThroughputPerGpu) {
  const mfu::Run r = read("megatron_lm_issue756.log");
  ASSERT_EQ(r.iterations.size(), 3u);
  const Iteration it = r.iterations[0];
  EXPECT_EQ(it.step, 10);
  EXPECT_NEAR(it.time_s, 9.4964, 1e-9);
  EXPECT_NEAR(it.reported_flops_per_gpu, 137.5e12, 137.5e12 * 1e-6);
  // [2024-03-30 20:02:40]
  EXPECT_NEAR(it.timestamp_s, 1711828960.0, 1e-3);
  EXPECT_EQ(r.meta.text("framework_flops_by"), "megatron-lm");
}

TEST(MegatronParser, ReadsMegatronDeepSpeedTflopsAndArgs) {
  const mfu::Run r = read("megatron_ds_tflops_excerpt.log");
  ASSERT_EQ(r.iterations.size(), 6u);
  EXPECT_NEAR(r.iterations[0].reported_flops_per_gpu, 7.97e12, 7.97e6);
  EXPECT_EQ(r.meta.number("kv_heads"), 4);
  EXPECT_EQ(r.meta.number("vocab"), 152064);  // "> padded vocab ... (new size: 152064)"
  EXPECT_EQ(r.meta.text("recompute"), "full");
  EXPECT_EQ(r.meta.number("swiglu"), 1);
  EXPECT_EQ(r.meta.number("tied_embeddings"), 0);
  EXPECT_EQ(r.meta.text("framework_flops_by"), "megatron-deepspeed");
}

TEST(MegatronParser, ReadsOldSingleLineTimersWithNestedAllReduces) {
  const mfu::Run r = read("megatron_bert_timers.log");
  ASSERT_EQ(r.iterations.size(), 1u);
  EXPECT_NEAR(r.iterations[0].time_s, 0.1234, 1e-9);
}

TEST(MegatronGoldenParser, ReadsIterationTimeSeries) {
  const mfu::Run r = read("megatron_golden_excerpt.json");
  EXPECT_EQ(r.format, "megatron-golden");
  ASSERT_GT(r.iterations.size(), 10u);
  for (std::size_t i = 0; i < r.iterations.size(); ++i) EXPECT_GT(r.iterations[i].time_s, 0);
  EXPECT_TRUE(known(r.iterations[0].loss));
}

TEST(TorchtitanParser, StripsColoursAndDerivesStepTimeFromTps) {
  const mfu::Run r = read("torchtitan_excerpt.log");
  EXPECT_EQ(r.format, "torchtitan");
  ASSERT_EQ(r.iterations.size(), 12u);
  const Iteration s10 = r.iterations[1];
  EXPECT_EQ(s10.step, 10);
  EXPECT_EQ(s10.count, 9u);
  EXPECT_NEAR(s10.loss, 11.78140, 1e-5);
  EXPECT_NEAR(s10.reported_mfu, 0.1538, 1e-7);
  // tps 70,593 with global batch 16 x 2048 tokens on 1 GPU: 32768 / 70593 s.
  EXPECT_NEAR(s10.time_s, 32768.0 / 70593.0, 1e-6);
  EXPECT_EQ(r.meta.number("framework_params"), 75516672);
  EXPECT_EQ(r.meta.number("framework_peak_flops"), 3.12e14);
  EXPECT_EQ(r.meta.text("gpu_name"), "NVIDIA GeForce RTX 5090");
  EXPECT_EQ(r.meta.text("recompute"), "selective");
}

TEST(TorchtitanParser, MergesTheSameStepPrintedByEveryRank) {
  const mfu::Run r = read("torchtitan_allranks.log");
  ASSERT_EQ(r.iterations.size(), 2u);  // steps 4 and 5
  EXPECT_EQ(r.iterations[0].step, 4);
  EXPECT_EQ(r.iterations[1].step, 5);
}

TEST(HfTrainerParser, ReadsDictLinesWithoutTiming) {
  const mfu::Run r = read("hf_loss_dicts.log");
  EXPECT_EQ(r.format, "hf-trainer");
  ASSERT_EQ(r.iterations.size(), 13u);
  EXPECT_NEAR(r.iterations[0].loss, 0.0923, 1e-7);
  EXPECT_EQ(r.timing, TimingKind::kNone);
}

TEST(HfTrainerParser, ReadsMsSwiftDictsBehindTqdmCarriageReturns) {
  const mfu::Run r = read("msswift_stdout_excerpt.log");
  ASSERT_GE(r.iterations.size(), 4u);
  EXPECT_EQ(r.iterations[0].step, 1);
  // train_speed(s/it) is elapsed/step: step 1 took 119.9 s, step 2 took 2*98.79 - 119.9 s.
  EXPECT_NEAR(r.iterations[0].time_s, 119.9, 1e-9);
  EXPECT_NEAR(r.iterations[1].time_s, 2 * 98.79 - 119.9, 1e-6);
}

TEST(HfTrainerStateParser, UsesAllResultsBesideTrainerStateAndSubtractsEvaluation) {
  const mfu::Run r = read("whisper_trainer_state.json");
  EXPECT_EQ(r.format, "hf-trainer-state");
  ASSERT_EQ(r.iterations.size(), 1u);
  double eval = 0;
  for (const auto& e : r.events)
    if (e.kind == EventKind::kEval) eval += e.duration_s;
  EXPECT_GT(eval, 0);
  const Iteration it = r.iterations[0];
  EXPECT_EQ(it.step, 5000);
  EXPECT_EQ(it.count, 5000u);
  EXPECT_NEAR(it.time_s, (77350.9963 - eval) / 5000.0, 1e-9);
}

TEST(DeepSpeedParser, ReadsMicrostepTimers) {
  const mfu::Run r = read("deepspeed_microstep_timers.log");
  EXPECT_EQ(r.format, "deepspeed");
  ASSERT_EQ(r.iterations.size(), 8u);
  const Iteration it = r.iterations[0];
  // forward 193.65 + backward_inner 329.14 + allreduce 0.05 + step 0.92 ms
  EXPECT_NEAR(it.time_s, (193.65 + 329.14 + 0.05 + 0.92) / 1000.0, 1e-9);
  EXPECT_NEAR(it.at(Phase::kComm), 0.00005, 1e-9);
}

TEST(DeepSpeedParser, ReadsGptNeoxIterationWithItsTimers) {
  const mfu::Run r = read("deepspeed_gptneox.log");
  ASSERT_EQ(r.iterations.size(), 1u);
  const Iteration it = r.iterations[0];
  EXPECT_EQ(it.step, 34);
  EXPECT_NEAR(it.time_s, 4.1031, 1e-9);
  EXPECT_NEAR(it.reported_flops_per_gpu, 112.9e12, 112.9e6);
  EXPECT_NEAR(it.at(Phase::kOptimizer), 1.17251, 1e-6);
}

TEST(DeepSpeedParser, ReadsDeepSpeedChatThroughputAndRlhfBreakdown) {
  const mfu::Run t = read("dschat_throughput_excerpt.log");
  ASSERT_EQ(t.iterations.size(), 6u);
  EXPECT_NEAR(t.iterations[0].time_s, 0.27, 1e-9);
  EXPECT_NEAR(t.iterations[0].reported_flops_per_gpu, 1.02e12, 1.02e6);
  EXPECT_EQ(t.meta.number("gpus"), 8);
  EXPECT_DOUBLE_EQ(t.iterations[0].samples, 16);  // batch 2 per GPU x 8 GPUs
  const mfu::Run r = read("dschat_rlhf_excerpt.log");
  ASSERT_EQ(r.iterations.size(), 3u);
  EXPECT_NEAR(r.iterations[0].time_s, 7.99, 1e-9);
  EXPECT_NEAR(r.iterations[0].at(Phase::kGenerate), 5.26, 1e-6);
  EXPECT_NEAR(r.iterations[0].at(Phase::kForwardBackward), 2.52, 1e-6);
}

TEST(DeepSpeedParser, PartialFlopsProfilerHeaderGivesMetadataOnly) {
  const mfu::Run r = read("deepspeed_flops_profiler_header.log");
  EXPECT_EQ(r.meta.number("gpus"), 16);
  EXPECT_EQ(r.meta.number("tp"), 8);
  EXPECT_EQ(r.iterations.size(), 0u);
}

TEST(NanoGptParser, ReadsIterLinesAndIgnoresThePlaceholderMfu) {
  const mfu::Run r = read("nanogpt_mfu.log");
  ASSERT_EQ(r.iterations.size(), 25u);
  EXPECT_FALSE(known(r.iterations[0].reported_mfu));  // "mfu -100.00%"
  EXPECT_NEAR(r.iterations[1].reported_mfu, 0.1668, 1e-7);
  EXPECT_EQ(r.iterations[1].count, 10u);
  EXPECT_EQ(r.timing, TimingKind::kSampled);
  bool eval = false;
  for (const auto& e : r.events) eval = eval || e.kind == EventKind::kEval;
  EXPECT_TRUE(eval);
}

TEST(NanoGptParser, ModdedNanoGptTrainTimeDifferencesAndTheResetAtStep10) {
  const mfu::Run r = read("modded_nanogpt_excerpt.txt");
  EXPECT_EQ(r.meta.text("gpu_name"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.meta.number("gpus_visible"), 8);
  ASSERT_GE(r.iterations.size(), 15u);
  EXPECT_NEAR(r.iterations[0].time_s, 74.701 - 0.285, 1e-9);  // step 1: compile
  EXPECT_NEAR(r.iterations[1].time_s, 75.965 - 74.701, 1e-9);
  // step 11 restarts train_time at 214 ms.
  for (std::size_t i = 0; i < r.iterations.size(); ++i)
    if (r.iterations[i].step == 11) {
      EXPECT_NEAR(r.iterations[i].time_s, 0.214, 1e-9);
    }
}

TEST(MlperfParser, ReadsBlocksEvaluationsAndTheSystemDescription) {
  const mfu::Run r = read("mlperf_llama2_lora_h200.txt");
  EXPECT_EQ(r.format, "mlperf");
  ASSERT_EQ(r.iterations.size(), 5u);
  EXPECT_EQ(r.meta.number("gpus"), 8);  // :::SYSJSON
  EXPECT_EQ(r.meta.text("gpu_name"), "NVIDIA H200-SXM5-141GB");
  // block 1: 1536 samples at GBS 8 = 192 steps in 639.475 s.
  EXPECT_EQ(r.iterations[0].count, 192u);
  EXPECT_NEAR(r.iterations[0].time_s, (1714994217.162 - 1714993577.687) / 192.0, 1e-6);
  int evals = 0;
  for (const auto& e : r.events) evals += e.kind == EventKind::kEval;
  EXPECT_EQ(evals, 5);
}

TEST(MaxTextParser, InfersDeviceCountFromTotalWeights) {
  const mfu::Run r = read("maxtext_steps.log");
  ASSERT_EQ(r.iterations.size(), 3u);
  EXPECT_NEAR(r.iterations[1].time_s, 10.228, 1e-9);
  EXPECT_NEAR(r.iterations[1].reported_flops_per_gpu, 350.869e12, 350.869e6);
  EXPECT_EQ(r.meta.number("gpus"), 8);  // 1572864 / (19222.175 x 10.228)
}

TEST(LightningCsvParser, DifferencesCumulativeThroughputMonitorColumns) {
  const mfu::Run r = read("lightning_metrics.csv");
  EXPECT_EQ(r.format, "lightning-csv");
  ASSERT_EQ(r.iterations.size(), 4u);
  EXPECT_FALSE(known(r.iterations[0].time_s));  // the first row has no earlier time to subtract
  EXPECT_NEAR(r.iterations[1].time_s, (48.8 - 24.5) / 50.0, 1e-9);
  EXPECT_NEAR(r.iterations[1].tokens, (6553600.0 - 3276800.0) / 50.0, 1e-6);
  EXPECT_NEAR(r.iterations[1].reported_mfu, 0.196, 1e-7);
  EXPECT_NEAR(r.iterations[1].loss, 5.871, 1e-6);
}

}  // namespace
}  // namespace mfu
