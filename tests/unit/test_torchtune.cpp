// torchtune's console: real excerpts (tests/data/README.md gives their provenance) and a
// generator of runs as its recipes print them (tqdm's bar redrawn twice per step, a new bar per
// epoch, Step lines that buffered stdout prints late), each with its right answer by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/gpu.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

mfu::Run read(const std::string& name) {
  return ingest({test::test_data(name).string()});
}

double total_time(const mfu::Run& r) {
  double s = 0;
  for (std::size_t i = 0; i < r.iterations.size(); ++i)
    s += r.iterations[i].time_s * r.iterations[i].count;
  return s;
}

// meta-pytorch/torchtune PR #2620: a bar prefixed "[trainer0|0]:", the excerpt starting at
// 55/101 [15:04]. By hand from the elapsed clocks: the first record is the bar's 55 steps in
// 904 s (16.436 s each); then 15:19-15:04 = 15 s, 20, 13, 11, 18, 13 s; 994 s = 16:34 in all.
// Each step's loss is the description drawn after its update ("1|56|Loss: 1.0739..." at 56/101).
TEST(TorchtuneParser, TimesTheBarByItsElapsedClock) {
  const mfu::Run r = read("torchtune_pr2620_multinode_steps55_61.log");
  EXPECT_EQ(r.format, "torchtune");
  ASSERT_EQ(r.iterations.size(), 7u);
  EXPECT_EQ(r.iterations[0].step, 55);
  EXPECT_EQ(r.iterations[0].count, 55u);
  EXPECT_NEAR(r.iterations[0].time_s, 904.0 / 55, 1e-9);
  const double seconds[] = {15, 20, 13, 11, 18, 13};
  const double loss[] = {1.073961615562439, 1.0494292974472046, 1.0572483539581299,
                         1.0517973899841309, 1.010416030883789};
  for (std::size_t i = 1; i < 7; ++i) {
    EXPECT_EQ(r.iterations[i].step, 55 + static_cast<std::int64_t>(i));
    EXPECT_EQ(r.iterations[i].count, 1u);
    EXPECT_DOUBLE_EQ(r.iterations[i].time_s, seconds[i - 1]);
    EXPECT_EQ(r.iterations[i].rank, 0);
    if (i < 6) {
      EXPECT_NEAR(r.iterations[i].loss, loss[i - 1], 1e-6);
    }
  }
  EXPECT_NEAR(r.iterations[0].loss, 1.0744975805282593, 1e-6);
  EXPECT_FALSE(known(r.iterations[6].loss));  // its description line is not in the excerpt
  EXPECT_NEAR(total_time(r), 994.0, 1e-9);
}

// meta-pytorch/torchtune PR #1909: one final redraw "5/5 [00:01<00:00, 2.80it/s]". One second
// of elapsed clock is too coarse for 5 steps; the bar's rate gives 1/2.80 = 0.357 s per step.
TEST(TorchtuneParser, TakesTheBarRateWhenTheClockIsTooCoarse) {
  const mfu::Run r = read("torchtune_pr1909_lora_bar.log");
  EXPECT_EQ(r.format, "torchtune");
  ASSERT_EQ(r.iterations.size(), 1u);
  EXPECT_EQ(r.iterations[0].step, 5);
  EXPECT_EQ(r.iterations[0].count, 5u);
  EXPECT_NEAR(r.iterations[0].time_s, 1 / 2.80, 1e-12);
  EXPECT_NEAR(r.iterations[0].loss, 1.7691251039505005, 1e-6);
}

// meta-pytorch/torchtune PR #1358: the metric logger alone, "Step N | loss:... lr:...
// tokens_per_second_per_gpu:...": records with losses, and no time (tokens/s is tokens over
// time, neither printed apart), so analysis refuses to make up an MFU.
TEST(TorchtuneParser, MetricLinesAloneAreUntimed) {
  const mfu::Run r = read("torchtune_pr1358_codellama_steps.log");
  EXPECT_EQ(r.format, "torchtune");
  ASSERT_EQ(r.iterations.size(), 12u);
  EXPECT_EQ(r.iterations[9].step, 10);
  EXPECT_NEAR(r.iterations[9].loss, 1.0359036922454834, 1e-6);
  for (std::size_t i = 0; i < 12; ++i) EXPECT_FALSE(known(r.iterations[i].time_s));
  EXPECT_TRUE(analyze(r, {}).untimed);
}

// samples-next/torchtune PROVENANCE: step 1 at 00:20, step 2 at 00:38, step 3 at 00:53 (20, 18,
// 15 s); the PR #640 file prints no timing (steps 0-17, loss 1.7536 at step 0).
TEST(TorchtuneParser, ReadsTheSamples) {
  const std::string bar = test::next_sample("torchtune", "meta-pytorch_torchtune_pr2620");
  const std::string untimed = test::next_sample("torchtune", "meta-pytorch_torchtune_pr640");
  if (bar.empty() || untimed.empty())
    MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/torchtune is not here");
  const mfu::Run r = ingest({bar});
  ASSERT_EQ(r.iterations.size(), 3u);
  const double seconds[] = {20, 18, 15};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.iterations[i].step, static_cast<std::int64_t>(i) + 1);
    EXPECT_DOUBLE_EQ(r.iterations[i].time_s, seconds[i]);
  }
  EXPECT_NEAR(r.iterations[1].loss, 2.764298677444458, 1e-6);
  const mfu::Run u = ingest({untimed});
  EXPECT_EQ(u.format, "torchtune");
  ASSERT_EQ(u.iterations.size(), 18u);
  EXPECT_EQ(u.iterations[0].step, 0);
  EXPECT_NEAR(u.iterations[0].loss, 1.7535516023635864, 1e-6);
  EXPECT_TRUE(analyze(u, {}).untimed);
}

// ---- a generator of torchtune runs ------------------------------------------------------

/// tqdm's elapsed format: "MM:SS", "H:MM:SS" past an hour (whole seconds, floored).
std::string clock(double seconds) {
  const auto s = static_cast<long>(std::floor(seconds));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{:02}:{:02}", s / 60, s % 60);
}

struct GeneratedRun {
  std::string text;
  std::vector<double> step_seconds;  // by global step - 1
  double bar_seconds = 0;            // what the bars' clocks add up to, by hand
};

struct RunShape {
  int epochs;
  int steps_per_epoch;
  double min_s, max_s;  // step durations
  int step_line_delay;  // Step lines printed this many steps late (buffered stdout)
  bool prefix;          // "[trainer0|0]:" before every write, repeated after a redraw
  unsigned seed;
};

double loss_of(int step) {
  return 1.0 + step / 1000.0;
}

GeneratedRun generate(const RunShape& shape) {
  std::mt19937 rng(shape.seed);
  std::uniform_real_distribution<double> dur(shape.min_s, shape.max_s);
  GeneratedRun g;
  const std::string tag = shape.prefix ? "[trainer0|0]:" : "";
  std::vector<std::string> step_lines;
  int global = 0;
  for (int e = 1; e <= shape.epochs; ++e) {
    double t = 0;
    const int total = shape.steps_per_epoch;
    std::string desc;  // the bar's description: empty until the first step of its epoch ends
    for (int n = 1; n <= total; ++n) {
      const double d = dur(rng);
      t += d;
      ++global;
      g.step_seconds.push_back(d);
      const std::string bar = fmt::format("{:3}%|#| {}/{} [{}<00:00, {:.2f}s/it]", n * 100 / total,
                                          n, total, clock(t), d);
      // pbar.update(1) draws the old description, then set_description draws the new one.
      g.text += tag + desc + bar + tag + "\n";
      desc = fmt::format("{}|{}|Loss: {}: ", e, global, loss_of(global));
      g.text += tag + desc + bar + "\n";
      step_lines.push_back(
          fmt::format("{}Step {} | loss:{} lr:2e-05 tokens_per_second_per_gpu:"
                      "{:.3f} \n",
                      tag, global, loss_of(global), 1000 / d));
      if (static_cast<int>(step_lines.size()) > shape.step_line_delay) {
        g.text += step_lines.front();
        step_lines.erase(step_lines.begin());
      }
    }
    g.bar_seconds += std::floor(t);
  }
  for (const auto& l : step_lines) g.text += l;
  return g;
}

// Slow steps (10.5-30 s): every redraw advances the clock by 10 s or more, so each step is its
// own record timed by the clock: its seconds are floor(T_i) - floor(T_{i-1}) within its epoch,
// and the records add up to the bars' final clocks. Steps go on across epochs (the new bar
// counts from 1 again), and each record carries its own step's loss, whether its Step line came
// at once or eight steps late.
TEST(TorchtuneGenerator, SlowStepsAreTimedByTheClockAcrossEpochs) {
  for (unsigned seed = 1; seed <= 12; ++seed) {
    const RunShape shape{1 + static_cast<int>(seed % 3),
                         5 + static_cast<int>(seed % 7),
                         10.5,
                         30,
                         static_cast<int>(seed % 2) * 8,
                         seed % 4 < 2,
                         seed};
    SCOPED_TRACE(fmt::format("seed {}: {} epochs of {} steps, Step lines {} late, prefix {}", seed,
                             shape.epochs, shape.steps_per_epoch, shape.step_line_delay,
                             shape.prefix));
    const GeneratedRun g = generate(shape);
    const mfu::Run r = ingest_text(g.text, "tune.log");
    EXPECT_EQ(r.format, "torchtune");
    const int steps = shape.epochs * shape.steps_per_epoch;
    ASSERT_EQ(r.iterations.size(), static_cast<std::size_t>(steps));
    double t = 0, shown = 0;
    for (int i = 0; i < steps; ++i) {
      if (i % shape.steps_per_epoch == 0) t = shown = 0;
      t += g.step_seconds[i];
      const double seconds = std::floor(t) - shown;
      shown = std::floor(t);
      EXPECT_EQ(r.iterations[i].step, i + 1);
      EXPECT_DOUBLE_EQ(r.iterations[i].time_s, seconds) << "step " << i + 1;
      EXPECT_NEAR(r.iterations[i].loss, loss_of(i + 1), 1e-6) << "step " << i + 1;
    }
    EXPECT_NEAR(total_time(r), g.bar_seconds, 1e-6);
  }
}

// Fast steps (0.3 s): several steps end within one second of the clock; they join one record,
// and its time is the bar's rate (the generator prints the step's own, 0.30 s/it). The records
// stand for every step, the last one carries the last step, and the time adds up to 0.3 s a step.
TEST(TorchtuneGenerator, FastStepsJoinRecordsAndKeepEveryStep) {
  for (int epochs = 1; epochs <= 3; ++epochs) {
    const RunShape shape{epochs, 40, 0.3, 0.3, 0, epochs == 2, 7};
    const GeneratedRun g = generate(shape);
    const mfu::Run r = ingest_text(g.text, "tune.log");
    EXPECT_EQ(r.format, "torchtune");
    std::uint64_t covered = 0;
    for (std::size_t i = 0; i < r.iterations.size(); ++i) {
      covered += r.iterations[i].count;
      EXPECT_NEAR(r.iterations[i].time_s, 0.3, 1e-12);
      EXPECT_NEAR(r.iterations[i].loss, loss_of(static_cast<int>(r.iterations[i].step)), 1e-6);
    }
    EXPECT_LT(r.iterations.size(), static_cast<std::size_t>(epochs * 40));  // steps joined
    EXPECT_EQ(covered, static_cast<std::uint64_t>(epochs * 40));
    EXPECT_EQ(r.iterations.back().step, epochs * 40);
    EXPECT_NEAR(total_time(r), epochs * 40 * 0.3, 1e-9);
  }
}

// The check above can fail: without the description lines (the bar's update redraws only,
// each showing the step before) the losses belong to the step before, which the parser must
// not take for its own.
TEST(TorchtuneGenerator, AnUpdateRedrawDoesNotLendItsStaleLoss) {
  const GeneratedRun g = generate({1, 6, 12, 12.5, 0, false, 3});
  std::string updates_only;
  std::size_t pos = 0, k = 0;
  while (pos < g.text.size()) {
    const std::size_t nl = g.text.find('\n', pos);
    const std::string line = g.text.substr(pos, nl - pos + 1);
    if (line.rfind("Step ", 0) != 0 && k++ % 2 == 0) updates_only += line;
    pos = nl + 1;
  }
  const mfu::Run r = ingest_text(updates_only, "tune.log");
  ASSERT_EQ(r.iterations.size(), 5u);  // the first update has no description to detect it by
  for (std::size_t i = 0; i < r.iterations.size(); ++i) {
    EXPECT_EQ(r.iterations[i].step, static_cast<std::int64_t>(i) + 2);
    EXPECT_FALSE(known(r.iterations[i].loss)) << "step " << r.iterations[i].step;
  }
}

// tokens_per_second_per_gpu on fast steps (the generator prints 1000 / 0.3 s): each record
// holds one GPU's 1,000 tokens a step. On an H100 SXM (989.5 TFLOP/s) with 6 GFLOP a token
// (PaLM's 6N of 1B parameters) MFU = 1000 / 0.3 x 6e9 / 989.5e12 = 2.0212%, per GPU without a
// GPU count; with 8 GPUs the same MFU and 8 x 1,000 tokens a step.
TEST(TorchtuneGenerator, PerGpuTokensGiveMfuWithOrWithoutTheGpuCount) {
  const GeneratedRun g = generate({2, 40, 0.3, 0.3, 0, false, 7});
  const mfu::Run r = ingest_text(g.text, "tune.log");
  AnalyzeOptions o;
  o.gpu = "h100-sxm";
  ModelShape m;
  m.id = "custom";
  m.params = 1e9;
  o.model = m;
  o.convention = Convention::kPalm;
  const double expected = 1000 / 0.3 * 6e9 / 989.5e12;
  const Analysis a = analyze(r, o);
  EXPECT_TRUE(a.per_gpu);
  ASSERT_TRUE(a.mfu_steady.has_value());
  EXPECT_NEAR(*a.mfu_steady, expected, 1e-4 * expected);  // the rate is printed to 3 decimals
  o.gpus = 8;
  const Analysis b = analyze(r, o);
  EXPECT_FALSE(b.per_gpu);
  ASSERT_TRUE(b.mfu_steady.has_value());
  EXPECT_NEAR(*b.mfu_steady, expected, 1e-4 * expected);
  EXPECT_NEAR(b.total_tokens, 8 * 1000 * 80, 8 * 80 * 0.01);
}

}  // namespace
}  // namespace mfu
