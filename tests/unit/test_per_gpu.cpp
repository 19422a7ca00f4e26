// A log that prints tokens/s per GPU (torchtune tokens_per_second_per_gpu, Megatron-DeepSpeed
// tgs, nanotron tokens_per_sec_per_gpu) gives MFU against the per-GPU peak without the GPU
// count: MFU = per-GPU tokens/s x FLOPs per token / per-GPU peak. With the count, the records'
// tokens are scaled to the job, and MFU must come out the same.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "mfu/analysis.hpp"
#include "mfu/ingest.hpp"
#include "mfu/report.hpp"

namespace mfu {
namespace {

struct PerGpuRun {
  std::string text;
  double seconds = 0;      // sum of the printed step times
  double gpu_tokens = 0;   // sum of printed rate x printed time (one GPU's tokens)
  double steady_rate = 0;  // per-GPU tokens/s over the steps
  std::size_t steps = 0;
};

// `steps` generic step lines, 4,096 tokens per GPU each, 1.5-2.5 s a step, the rate under one
// of the names frameworks give it.
PerGpuRun generate(unsigned seed, std::size_t steps) {
  static const char* const kNames[] = {"tokens_per_second_per_gpu", "tgs",
                                       "tokens_per_sec_per_gpu"};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dur(1.5, 2.5);
  const char* name = kNames[seed % 3];
  PerGpuRun g;
  g.steps = steps;
  for (std::size_t i = 1; i <= steps; ++i) {
    const double t = std::round(dur(rng) * 1e4) / 1e4;
    const double rate = std::round(4096 / t * 1e3) / 1e3;
    g.text += fmt::format("step {} | step_time {:.4f} s | loss {:.3f} | {} {:.3f}\n", i, t,
                          3 - i / 100.0, name, rate);
    g.seconds += t;
    g.gpu_tokens += rate * t;
  }
  g.steady_rate = g.gpu_tokens / g.seconds;
  return g;
}

AnalyzeOptions options() {
  AnalyzeOptions o;
  o.gpu = "h100-sxm";  // 989.5 TFLOP/s dense bf16 (NVIDIA H100 datasheet)
  ModelShape m;
  m.id = "custom";
  m.params = 1e9;  // PaLM's 6N: 6 GFLOP a token (attention left out without a shape)
  o.model = m;
  o.convention = Convention::kPalm;
  return o;
}

// By hand: MFU = 6e9 x (one GPU's tokens) / (989.5e12 x the steps' seconds): about
// 6e9 x 4096 / (989.5e12 x 2) = 1.24% for 2 s steps. No GPU count: a per-GPU analysis, with no
// job totals; with 1, 8 or 64 GPUs the same MFU, and the job's tokens/s = G x the per-GPU rate.
TEST(PerGpuRate, GivesMfuWithoutTheGpuCountAndTheSameWithIt) {
  for (unsigned seed = 1; seed <= 9; ++seed) {
    const PerGpuRun g = generate(seed, 30 + seed * 5);
    SCOPED_TRACE(fmt::format("seed {}", seed));
    const mfu::Run run = ingest_text(g.text, "steps.log");
    ASSERT_EQ(run.format, "generic");
    const double expected = 6e9 * g.gpu_tokens / (989.5e12 * g.seconds);
    const Analysis a = analyze(run, options());
    EXPECT_TRUE(a.per_gpu);
    ASSERT_TRUE(a.mfu.has_value());
    EXPECT_NEAR(*a.mfu, expected, 1e-9);
    EXPECT_FALSE(a.tokens_per_s.has_value());
    EXPECT_FALSE(known(a.total_tokens));
    EXPECT_EQ(a.gpu_hours, 0);
    for (double gpus : {1.0, 8.0, 64.0}) {
      AnalyzeOptions o = options();
      o.gpus = gpus;
      const Analysis b = analyze(run, o);
      EXPECT_FALSE(b.per_gpu);
      ASSERT_TRUE(b.mfu.has_value());
      // Without the scaling by the count, MFU would be 1/G of this: the check fails for G > 1.
      EXPECT_NEAR(*b.mfu, expected, 1e-9) << gpus << " GPUs";
      EXPECT_NEAR(b.total_tokens, g.gpu_tokens * gpus, 1e-6 * g.gpu_tokens * gpus);
      EXPECT_NEAR(b.gpu_hours, b.wall_time_s * gpus / 3600, 1e-9);
    }
  }
}

// The text report says the figures are per GPU and why, and the JSON carries the flag.
TEST(PerGpuRate, ReportsSayTheFiguresArePerGpu) {
  const PerGpuRun g = generate(4, 40);
  const mfu::Run run = ingest_text(g.text, "steps.log");
  const Analysis a = analyze(run, options());
  std::ostringstream text, json;
  render_analysis(a, run, OutputFormat::kText, RenderOptions{}, text);
  render_analysis(a, run, OutputFormat::kJson, RenderOptions{}, json);
  EXPECT_NE(text.str().find("tokens/s per GPU"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("the GPU count is unknown"), std::string::npos) << text.str();
  EXPECT_NE(json.str().find("\"per_gpu\": true"), std::string::npos) << json.str();
}

// A log whose rate is the job's (tokens/s of all GPUs) is not per GPU: without the GPU count,
// MFU stays unknown (the rate alone cannot say how many peaks to divide by).
TEST(PerGpuRate, AJobWideRateNeedsTheGpuCount) {
  std::string text;
  for (int i = 1; i <= 20; ++i)
    text += fmt::format("step {} | step_time 2.0000 s | tokens_per_second 16384.0\n", i);
  const mfu::Run run = ingest_text(text, "steps.log");
  const Analysis a = analyze(run, options());
  EXPECT_FALSE(a.per_gpu);
  EXPECT_FALSE(a.mfu.has_value());
  AnalyzeOptions o = options();
  o.gpus = 8;
  const Analysis b = analyze(run, o);
  ASSERT_TRUE(b.mfu.has_value());
  // 16,384 tokens/s x 6e9 / (8 x 989.5e12) = 1.2418%.
  EXPECT_NEAR(*b.mfu, 16384 * 6e9 / (8 * 989.5e12), 1e-9);
}

// Converted to mfu's native JSON Lines, the run keeps its per-GPU tokens and says so: the same
// MFU read back (without the scope, tokens would be taken for the job's and MFU lost).
TEST(PerGpuRate, TheNativeFormatKeepsTheScope) {
  const PerGpuRun g = generate(5, 30);
  const mfu::Run run = ingest_text(g.text, "steps.log");
  std::ostringstream native;
  write_native(run, native);
  const mfu::Run back = ingest_text(native.str(), "steps.jsonl");
  EXPECT_EQ(back.meta.text("tokens_scope").value_or(""), "gpu");
  const Analysis a = analyze(run, options()), b = analyze(back, options());
  ASSERT_TRUE(a.mfu && b.mfu);
  EXPECT_NEAR(*b.mfu, *a.mfu, 1e-9);
}

}  // namespace
}  // namespace mfu
