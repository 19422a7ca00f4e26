// Parsers of issue 14's formats over real excerpts (tests/data/README.md gives their provenance;
// the folders of ../shared/samples-next are read where they exist): the step times are the ones
// the lines print.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"
#include "text.hpp"

namespace mfu {
namespace {

mfu::Run read(const std::string& name) {
  return ingest({test::test_data(name).string()});
}

// NeMo 2 (NVIDIA-BioNeMo/bionemo-recipes PR #740): six consecutive logged steps, each printing
// train_step_timing in s; global_batch_size 1.
TEST(NemoParser, ReadsNemo2StepLines) {
  const mfu::Run r = read("nemo2_bionemo_steps.log");
  EXPECT_EQ(r.format, "nemo");
  ASSERT_EQ(r.iterations.size(), 6u);
  const double printed[] = {0.03146, 0.03163, 0.03215, 0.03157, 0.0317, 0.03147};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(r.iterations[i].step, 120 + static_cast<std::int64_t>(i));
    EXPECT_DOUBLE_EQ(r.iterations[i].time_s, printed[i]);
    EXPECT_DOUBLE_EQ(r.iterations[i].samples, 1);
  }
  EXPECT_NEAR(r.iterations[0].loss, 1.233, 1e-6);
}

// The dgxc-benchmarking lines (samples-next/nemo1 and nemo2 PROVENANCE). NeMo 2: iteration
// 49/49 prints train_step_timing 12.39 s (Llama 3.1, GBS 128) and 2.693 s (Nemotron, GBS 256).
// NeMo 1, Lightning's bar: "50/50 [31:51<00:00, reduced_train_loss=6.130, global_step=50.0, ...,
// train_step_timing in s=5.900, ...]" and Grok-1's global_step=49.00 at 24.00 s (no batch).
TEST(NemoParser, ReadsTheBenchmarkRecipesLines) {
  struct Case {
    const char* folder;
    const char* prefix;
    std::int64_t step;
    double seconds, global_batch;
  };
  const Case cases[] = {
      {"nemo2", "NVIDIA_dgxc-benchmarking_v25.04.01_llama3.1", 49, 12.39, 128},
      {"nemo2", "NVIDIA_dgxc-benchmarking_v25.04.01_nemotron", 49, 2.693, 256},
      {"nemo1", "NVIDIA_dgxc-benchmarking_v25.04.01_nemo_megatron_175b", 50, 5.9, kUnknown},
      {"nemo1", "NVIDIA_dgxc-benchmarking_v25.04.01_grok1", 49, 24.0, kUnknown},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.prefix);
    const std::string path = test::next_sample(c.folder, c.prefix);
    if (path.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/nemo1 or nemo2 is not here");
    const mfu::Run r = ingest({path});
    EXPECT_EQ(r.format, "nemo");
    ASSERT_EQ(r.iterations.size(), 1u);
    EXPECT_EQ(r.iterations[0].step, c.step);
    EXPECT_DOUBLE_EQ(r.iterations[0].time_s, c.seconds);
    if (known(c.global_batch)) {
      EXPECT_DOUBLE_EQ(r.iterations[0].samples, c.global_batch);
    } else {
      EXPECT_FALSE(known(r.iterations[0].samples));
    }
  }
}

// A redrawn Lightning bar (carriage returns) with the metrics of the last logged step: the
// redraws of one global_step are one record, the last redraw's. Without train_step_timing the
// bar's elapsed clock times the steps: 10 steps from 00:20 to 00:40 are 2 s each.
TEST(NemoParser, RedrawsOfOneStepAreOneRecordAndTheClockTimesUntimedBars) {
  std::string text;
  for (int n = 10; n <= 30; n += 10) {
    for (int redraw = 0; redraw < 3; ++redraw)
      text += fmt::format(
          "Epoch 0: : {}%|###| {}/100 [00:{:02}<01:00, reduced_train_loss=2.0, "
          "global_step={}.0, consumed_samples={}.0]\r",
          n, n, 2 * n, n, n * 8);
  }
  const mfu::Run r = ingest_text(text + "\n", "nemo1.log");
  EXPECT_EQ(r.format, "nemo");
  ASSERT_EQ(r.iterations.size(), 3u);
  EXPECT_TRUE(std::isnan(r.iterations[0].time_s));  // nothing before it to time it by
  EXPECT_DOUBLE_EQ(r.iterations[1].time_s, 2.0);
  EXPECT_DOUBLE_EQ(r.iterations[2].time_s, 2.0);
}

// NeMo 2 without its timing callback (samples-next/nemo2, NVIDIA-NeMo/Speech PR #10128): steps
// 0..8 with loss and consumed samples but no time. Read, and then refused by analyze (no step
// time: nothing to judge) — the CLI test checks the exit code.
TEST(NemoParser, LinesWithoutTimingAreRecordsWithoutTime) {
  const std::string path = test::next_sample("nemo2", "NVIDIA-NeMo_Speech_pr10128");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/nemo2 is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "nemo");
  ASSERT_EQ(r.iterations.size(), 9u);
  for (std::size_t i = 0; i < r.iterations.size(); ++i)
    EXPECT_TRUE(std::isnan(r.iterations[i].time_s));
  const auto result = test::run_mfu("analyze " + test::shell_quote(path));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("no step time"), std::string::npos) << result.err;
  EXPECT_TRUE(result.out.empty());
}

// llama2.c train.py (karpathy/llama2.c issue #461): every 10 iterations the time of the one just
// run; the iteration after each evaluation ran it too. By hand: iter 500 prints 870067.53 ms
// against 8060.78 ms for iter 490, so the evaluation at 500 took 862.00675 s and the record keeps
// 8.06078 s; at 600, 867500.58 - 7949.49 ms = 859.55109 s.
TEST(Llama2cParser, ReadsTrainPyLinesAndTakesTheEvaluationsOut) {
  const mfu::Run r = read("llama2c_tinystories_mps.log");
  EXPECT_EQ(r.format, "nanogpt");
  ASSERT_EQ(r.iterations.size(), 17u);
  EXPECT_EQ(r.iterations[0].step, 490);
  EXPECT_DOUBLE_EQ(r.iterations[0].time_s, 8.06078);
  EXPECT_NEAR(r.iterations[0].reported_mfu, 0.0021, 1e-7);  // stored as float
  EXPECT_DOUBLE_EQ(r.iterations[1].time_s, 8.06078);        // iter 500 without its evaluation
  std::vector<double> evals;
  for (const auto& e : r.events)
    if (e.kind == EventKind::kEval) evals.push_back(e.duration_s);
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_NEAR(evals[0], 862.00675, 1e-6);
  EXPECT_NEAR(evals[1], 859.55109, 1e-6);
}

// A llama2.c fork that dropped the mfu field (nwyin/modded-llama2 issue #10): the time ends the
// line. By hand from the lines: iter 0 (after the evaluation at step 0 and the compile) 104573.61
// ms, then every 10 iterations one sampled iteration, 13597.70 ms at 10 to 13705.85 ms at 240;
// 25 records, each after the first standing for its 10 iterations.
TEST(Llama2cParser, ReadsForkLinesWithoutTheMfuField) {
  const mfu::Run r = read("llama2c_modded_llama2_issue10.log");
  EXPECT_EQ(r.format, "nanogpt");
  ASSERT_EQ(r.iterations.size(), 25u);
  EXPECT_EQ(r.iterations[0].step, 0);
  EXPECT_DOUBLE_EQ(r.iterations[0].time_s, 104.57361);
  EXPECT_EQ(r.iterations[1].step, 10);
  EXPECT_DOUBLE_EQ(r.iterations[1].time_s, 13.5977);
  EXPECT_EQ(r.iterations[24].step, 240);
  EXPECT_DOUBLE_EQ(r.iterations[24].time_s, 13.70585);
  EXPECT_EQ(r.iterations.count(24), 10u);
  EXPECT_NEAR(r.iterations[1].loss, 9.375, 1e-6);
}

// The class behind the fork above: llama2.c train.py lines with or without the trailing mfu
// field, with trailing spaces, a "| mfu" of -100% (llama2.c's first lines), and the evaluation
// lines between. Generated: step k*10 prints 1000 + k ms; an evaluation line comes before steps
// 50, 150 and 250. By hand: each record holds its time in seconds, except the one printed right
// after an evaluation, which keeps the sample before it ((999 + k) ms) while its 1 ms excess
// becomes the evaluation's duration: three evaluations of 0.001 s.
TEST(Llama2cParser, GeneratedLinesWithAndWithoutTheMfuFieldAreRead) {
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    std::string text;
    for (int k = 0; k <= 30; ++k) {
      if (k % 10 == 5) text += fmt::format("step {}: train loss 4.1, val loss 4.2\n", k * 10);
      text += fmt::format("{} | loss {:.4f} | lr {:e} | {:.2f}ms", k * 10, 5.0 - 0.01 * k, 3e-4,
                          1000.0 + k);
      if (variant == 1) text += fmt::format(" | mfu {:.2f}%", k == 0 ? -100.0 : 12.5);
      if (variant == 2) text += "   ";
      if (variant == 3) text += fmt::format(" | mfu {:.2f}%   ", 12.5);
      text += "\n";
    }
    const mfu::Run r = ingest_text(text, "train.log");
    EXPECT_EQ(r.format, "nanogpt");
    ASSERT_EQ(r.iterations.size(), 31u);
    for (int k = 0; k <= 30; ++k) {
      const auto& it = r.iterations[static_cast<std::size_t>(k)];
      EXPECT_EQ(it.step, k * 10);
      const double ms = k % 10 == 5 ? 999.0 + k : 1000.0 + k;
      EXPECT_NEAR(it.time_s, ms / 1000, 1e-12) << "step " << k * 10;
    }
    std::vector<double> evals;
    for (const auto& e : r.events)
      if (e.kind == mfu::EventKind::kEval) evals.push_back(e.duration_s);
    ASSERT_EQ(evals.size(), 3u);
    for (double d : evals) EXPECT_NEAR(d, 0.001, 1e-12);
  }
}

// llm.c's AMD port (samples-next/llama2c, anthonix/llm.c issue #2): the fields without llm.c's
// parentheses, loss nan. Step 10: 36.58 ms, 9.2% bf16 MFU, 112241 tok/s (4105.8 tokens).
TEST(Llama2cParser, ReadsLlmcPortLinesWithoutParentheses) {
  const std::string path = test::next_sample("llama2c", "anthonix_llm.c");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/llama2c is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "nanogpt");
  ASSERT_EQ(r.iterations.size(), 11u);
  EXPECT_EQ(r.iterations[0].step, 10);
  EXPECT_DOUBLE_EQ(r.iterations[0].time_s, 0.03658);
  EXPECT_NEAR(r.iterations[0].reported_mfu, 0.092, 1e-7);
  EXPECT_NEAR(r.iterations[0].tokens, 112241 * 0.03658, 1e-6);
  EXPECT_DOUBLE_EQ(r.iterations[10].time_s, 0.03674);
}

// nanotron (huggingface/nanotron issue #390): "elapsed_time_per_iteration_ms: 11.5K" is 11.5 s;
// tokens_per_sec 22.8K over tokens_per_sec_per_gpu 11.4K is 2 GPUs; model_tflops_per_gpu 38.3.
// By hand: tokens per step 22800 x 11.5 = 262200; the lines' own clock (16:31:56 to 16:32:30,
// 34 s for 3 steps, 11.3 s each) agrees with the printed time.
TEST(NanotronParser, ReadsHumanFormatNumbersAndTheGpuCount) {
  const mfu::Run r = read("nanotron_issue390_steps.log");
  EXPECT_EQ(r.format, "nanotron");
  ASSERT_EQ(r.iterations.size(), 4u);
  EXPECT_EQ(r.iterations[0].step, 327281);
  EXPECT_DOUBLE_EQ(r.iterations[0].time_s, 11.5);
  EXPECT_DOUBLE_EQ(r.iterations[0].samples, 64);
  EXPECT_NEAR(r.iterations[0].tokens, 262200, 1e-6);
  EXPECT_NEAR(r.iterations[0].reported_flops_per_gpu, 38.3e12, 1e6);
  EXPECT_EQ(r.meta.number("gpus").value_or(0), 2);
  EXPECT_EQ(r.meta.number("train_iters").value_or(0), 378950);
  EXPECT_NEAR(r.iterations[3].timestamp_s - r.iterations[0].timestamp_s, 34, 1e-9);
}

// A generated nanotron line at scale: tokens_per_sec 1.1M over tokens_per_sec_per_gpu 4.3K is
// 255.8, within the 3-digit rounding of 256 GPUs; 2.5K ms is 2.5 s; the key tokens_per_sec is
// not read from tokens_per_sec_per_gpu (tokens per step 1.1e6 x 2.5 = 2.75e6).
TEST(NanotronParser, ReadsSuffixesAtScale) {
  const mfu::Run r = ingest_text(
      "[INFO|DP=0|PP=0|TP=0]: iteration: 10 / 100 | consumed_tokens: 1.5B | "
      "elapsed_time_per_iteration_ms: 2.5K | tokens_per_sec_per_gpu: 4.3K | tokens_per_sec: 1.1M | "
      "global_batch_size: 1.02K | lm_loss: 2.1\n",
      "nanotron.log");
  EXPECT_EQ(r.format, "nanotron");
  ASSERT_EQ(r.iterations.size(), 1u);
  EXPECT_DOUBLE_EQ(r.iterations[0].time_s, 2.5);
  EXPECT_DOUBLE_EQ(r.iterations[0].samples, 1020);
  EXPECT_NEAR(r.iterations[0].tokens, 2.75e6, 1e-3);
  EXPECT_EQ(r.meta.number("gpus").value_or(0), 256);
}

// The other two nanotron sources (samples-next/nanotron PROVENANCE): PR #23's tiny run, 45 ms,
// 41.2 ms, 39.4 ms on 8 GPUs (14.2K / 1.78K); issue #233's resumed iteration 12001 under a Slurm
// prefix, 28.2K ms on 32 GPUs (74.5K / 2.33K) at 26.7 TFLOP/s per GPU.
TEST(NanotronParser, ReadsTheSamplesWithTheirPrefixes) {
  const std::string tiny = test::next_sample("nanotron", "huggingface_nanotron_pr23");
  const std::string resumed = test::next_sample("nanotron", "huggingface_nanotron_issue233");
  if (tiny.empty() || resumed.empty())
    MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/nanotron is not here");
  const mfu::Run a = ingest({tiny});
  EXPECT_EQ(a.format, "nanotron");
  ASSERT_EQ(a.iterations.size(), 3u);
  EXPECT_DOUBLE_EQ(a.iterations[0].time_s, 0.045);
  EXPECT_DOUBLE_EQ(a.iterations[1].time_s, 0.0412);
  EXPECT_DOUBLE_EQ(a.iterations[2].time_s, 0.0394);
  EXPECT_EQ(a.meta.number("gpus").value_or(0), 8);
  const mfu::Run b = ingest({resumed});
  EXPECT_EQ(b.format, "nanotron");
  ASSERT_EQ(b.iterations.size(), 1u);
  EXPECT_EQ(b.iterations[0].step, 12001);
  EXPECT_EQ(b.iterations[0].rank, 0);
  EXPECT_DOUBLE_EQ(b.iterations[0].time_s, 28.2);
  EXPECT_EQ(b.meta.number("gpus").value_or(0), 32);
  EXPECT_NEAR(b.iterations[0].reported_flops_per_gpu, 26.7e12, 1e6);
}

// Lightning 2.x's ThroughputMonitor puts the stage before its columns ("train/time",
// "train/device/mfu", "train/device/flops_per_sec"): the same metrics.csv with those headers
// reads as the unprefixed one, record for record; a validation stage's columns are not read as
// the training's.
TEST(LightningCsv, StagePrefixedThroughputColumnsReadAsTheUnprefixed) {
  const std::string plain = test::read_file(test::test_data("lightning_metrics.csv"));
  const std::size_t nl = plain.find('\n');
  std::string header = plain.substr(0, nl), prefixed;
  for (auto part : detail::split(header, ',')) {
    const std::string c(part);
    const bool monitor = c == "time" || c == "batches" || c == "samples" || c == "lengths" ||
                         c.rfind("device/", 0) == 0;
    prefixed += (prefixed.empty() ? "" : ",") + (monitor ? "train/" + c : c);
  }
  const mfu::Run a = ingest_text(plain, "metrics.csv");
  const mfu::Run b = ingest_text(prefixed + plain.substr(nl), "metrics.csv");
  EXPECT_EQ(b.format, "lightning-csv");
  ASSERT_EQ(a.iterations.size(), b.iterations.size());
  ASSERT_FALSE(a.iterations.empty());
  auto same = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  std::size_t timed = 0;
  for (std::size_t i = 0; i < a.iterations.size(); ++i) {
    EXPECT_TRUE(same(b.iterations[i].time_s, a.iterations[i].time_s)) << i;
    EXPECT_TRUE(
        same(b.iterations[i].reported_flops_per_gpu, a.iterations[i].reported_flops_per_gpu))
        << i;
    timed += known(a.iterations[i].time_s) ? 1 : 0;
  }
  EXPECT_GT(timed, 0u);
  std::string validate = header;
  for (const char* c : {"time,", "device/mfu,"}) {
    const std::size_t p = validate.find(c);
    validate.insert(p, "validate/");
  }
  const mfu::Run v = ingest_text(validate + plain.substr(nl), "metrics.csv");
  for (std::size_t i = 0; i < v.iterations.size(); ++i) EXPECT_FALSE(known(v.iterations[i].time_s));
}

}  // namespace
}  // namespace mfu
