// Composer / llm-foundry console blocks: three real excerpts (tests/data/README.md gives their
// provenance) and a generator of runs as the console logger prints them, with the right answer
// of every record by hand. Each real excerpt is checked against a second figure it prints
// (the speed monitor's rate, the command line's batch size) that the parser does not time by.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "mfu/analysis.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

mfu::Run read(const std::string& name) {
  return ingest({test::test_data(name).string()});
}

// ROCm blog "Distributed fine-tuning of MPT-30B using Composer on AMD GPUs", two nodes of 8
// MI300X: one block at batch 5 of 5. time/train 0.5249 h = 1,889.64 s over 5 batches = 377.93 s
// each; time/token 29,254,495 over the 4 batches before = 7,313,623.75 tokens a batch, and
// time/sample 4,096 / 4 = 1,024 samples: the global_train_batch_size=1024 of the blog's command
// line. The speed monitor's 0.0027 batches/s (two digits) says 370 s (within 2.1%), and its
// 20,082.84 tokens/s over one device's 1,255.18 says 16.0 devices: num_gpus_per_node 8 x
// num_nodes 2 of the Config block.
TEST(ComposerParser, ReadsTheTwoNodeBlock) {
  const mfu::Run r = read("composer_rocm_blog_mpt30b_2nodes.log");
  EXPECT_EQ(r.format, "composer");
  ASSERT_EQ(r.iterations.size(), 1u);
  const Iteration it = r.iterations[0];
  EXPECT_EQ(it.step, 5);
  EXPECT_EQ(it.count, 5u);
  EXPECT_NEAR(it.time_s, 0.5249 * 3600 / 5, 1e-9);
  EXPECT_NEAR(it.time_s, 1 / 0.0027, 0.021 * 370.37);
  EXPECT_DOUBLE_EQ(it.tokens, 29254495.0 / 4);
  EXPECT_DOUBLE_EQ(it.samples, 1024);
  EXPECT_NEAR(it.loss, 8.4213, 1e-6);
  EXPECT_EQ(r.meta.number("gpus_per_node"), 8);
  EXPECT_EQ(r.meta.number("nodes"), 2);
  EXPECT_NEAR(20082.8418 / 1255.1776, 16, 0.01);
  const Analysis a = analyze(r, {});
  EXPECT_EQ(a.gpus, 16);
}

// A profiled one-GPU MoE run (composer 0.31.0), blocks at batches 1, 10 and 20. time/train:
// 0.0050 h = 18 s for batch 1; (0.0280 - 0.0050) x 3600 = 82.8 s for batches 2-10 (9.2 s
// each); (0.0536 - 0.0280) x 3600 = 92.16 s for 11-20 (9.216 s each). time/token grows
// 18,432 over 9 batches and 20,480 over 10: 2,048 tokens (2 samples of 1,024) a batch. The
// speed monitor's 222.2194 tokens/s says 2,048 / 222.2194 = 9.2161 s (within 0.01%).
TEST(ComposerParser, TimesBlocksByTheTrainClock) {
  const mfu::Run r = read("composer_moe_profiled_batches1_10_20.log");
  EXPECT_EQ(r.format, "composer");
  ASSERT_EQ(r.iterations.size(), 3u);
  const std::int64_t steps[] = {1, 10, 20};
  const std::uint32_t counts[] = {1, 9, 10};
  const double times[] = {18.0, 9.2, 9.216};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.iterations[i].step, steps[i]);
    EXPECT_EQ(r.iterations[i].count, counts[i]);
    EXPECT_NEAR(r.iterations[i].time_s, times[i], 1e-9) << i;
  }
  EXPECT_FALSE(known(r.iterations[0].tokens));  // nothing counted before batch 1
  EXPECT_DOUBLE_EQ(r.iterations[1].tokens, 2048);
  EXPECT_DOUBLE_EQ(r.iterations[2].tokens, 2048);
  EXPECT_DOUBLE_EQ(r.iterations[2].samples, 2);
  EXPECT_NEAR(r.iterations[2].time_s, 2048 / 222.2194, 1e-4 * 9.216);
  EXPECT_NEAR(r.iterations[2].loss, 0.0051, 1e-6);
}

// princeton-nlp/LLM-Shearing issue #24: a block at batch 366 of 48,000, cut before time/train.
// time/token 382,730,240 over 365 batches = 1,048,576 = 2^20 tokens a batch, time/sample
// 93,440 / 365 = 256 sequences of 4,096. No time: the record is untimed and analysis says so.
TEST(ComposerParser, ABlockWithoutItsClockIsUntimed) {
  const mfu::Run r = read("composer_llmshearing_issue24_batch366.log");
  EXPECT_EQ(r.format, "composer");
  ASSERT_EQ(r.iterations.size(), 1u);
  EXPECT_EQ(r.iterations[0].step, 366);
  EXPECT_DOUBLE_EQ(r.iterations[0].tokens, 1048576);
  EXPECT_DOUBLE_EQ(r.iterations[0].samples, 256);
  EXPECT_FALSE(known(r.iterations[0].time_s));
  EXPECT_EQ(r.meta.number("train_iters"), 48000);
  EXPECT_TRUE(analyze(r, {}).untimed);
}

// ---- generator ---------------------------------------------------------------------------

struct Shape {
  int batches;
  int interval;         // console_log_interval in batches (composer also logs batch 1)
  double min_s, max_s;  // batch durations
  int eval_every;       // an evaluation of eval_s after every eval_every batches (0: none)
  double eval_s;
  bool epoch_tag;  // "[epoch=1][batch=N/M]:" instead of "[batch=N/M]:"
  unsigned seed;
};

constexpr int kWindow = 10;          // the speed monitor's window (batches)
constexpr double kSamples = 8;       // per batch
constexpr double kTokens = 8 * 512;  // per batch

double round4(double v) {
  return std::round(v * 1e4) / 1e4;
}

struct Expected {
  std::int64_t step;
  std::uint32_t count;
  double time_s;
};

struct Generated {
  std::string text;
  std::vector<Expected> records;
  std::vector<double> evals;  // durations as the log's time/val growth gives them
  double last_clock_s = 0;    // the last block's time/train, as printed, in seconds
};

Generated generate(const Shape& s) {
  std::mt19937 rng(s.seed);
  std::uniform_real_distribution<double> dur(s.min_s, s.max_s);
  std::vector<double> d(static_cast<std::size_t>(s.batches) + 1, 0);
  Generated g;
  double train = 0, val = 0, shown_train = 0, shown_val = 0;
  int last = 0;
  for (int n = 1; n <= s.batches; ++n) {
    d[n] = dur(rng);
    train += d[n];
    if (n % s.interval != 0 && n != 1) {
      if (s.eval_every && n % s.eval_every == 0) val += s.eval_s;
      continue;
    }
    const std::string head = s.epoch_tag ? fmt::format("[epoch=1][batch={}/{}]:\n", n, s.batches)
                                         : fmt::format("[batch={}/{}]:\n", n, s.batches);
    g.text += head;
    g.text += fmt::format("\t Train time/batch: {}\n\t Train time/sample: {}\n", n - 1,
                          (n - 1) * kSamples);
    g.text += fmt::format("\t Train time/token: {}\n", (n - 1) * kTokens);
    g.text += fmt::format("\t Train loss/train/total: {:.4f}\n", 10.0 - n / 100.0);
    double window = 0;
    if (n >= kWindow) {
      for (int i = n - kWindow + 1; i <= n; ++i) window += d[i];
      g.text +=
          fmt::format("\t Train throughput/samples_per_sec: {:.4f}\n", kSamples * kWindow / window);
    }
    g.text += fmt::format("\t Train time/train: {:.4f}\n\t Train time/val: {:.4f}\n", train / 3600,
                          val / 3600);
    g.text += "\t Train expert/image: <wandb.sdk.data_types.image.Image object at 0x7f>\n";
    // By hand: the clock's growth (as printed) over the batches since the last block, unless
    // under 36 s with a rate printed: then the printed samples/s over 8 samples a batch.
    const double grown = (round4(train / 3600) - shown_train) * 3600;
    const std::uint32_t count = static_cast<std::uint32_t>(n - last);
    const double rate = n >= kWindow ? round4(kSamples * kWindow / window) : 0;
    g.records.push_back({n, count, grown >= 36 || rate == 0 ? grown / count : kSamples / rate});
    const double val_grown = (round4(val / 3600) - shown_val) * 3600;
    if (val_grown > 0.36 && last > 0) g.evals.push_back(val_grown);
    shown_train = round4(train / 3600);
    g.last_clock_s = shown_train * 3600;
    shown_val = round4(val / 3600);
    last = n;
    if (s.eval_every && n % s.eval_every == 0) val += s.eval_s;
  }
  return g;
}

void expect_records(const Generated& g, const mfu::Run& r) {
  ASSERT_EQ(r.format, "composer");
  ASSERT_EQ(r.iterations.size(), g.records.size());
  for (std::size_t i = 0; i < g.records.size(); ++i) {
    const Iteration it = r.iterations[i];
    EXPECT_EQ(it.step, g.records[i].step) << i;
    EXPECT_EQ(it.count, g.records[i].count) << i;
    EXPECT_NEAR(it.time_s, g.records[i].time_s, 1e-9 * g.records[i].time_s) << "record " << i;
    if (i > 0) {
      EXPECT_DOUBLE_EQ(it.tokens, kTokens) << i;
    }
  }
}

// Slow batches (20-40 s) logged every 5: every record is timed by time/train, so the records
// add up to the last block's clock (to its printed 0.0001 h), and each evaluation between two
// blocks is an event of its time/val growth.
TEST(ComposerGenerator, SlowBatchesAreTimedByTheClockWithEvaluations) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    const Shape shape{
        40 + static_cast<int>(seed) * 3, 5, 20, 40, seed % 2 ? 10 : 0, 300, seed % 3 == 0, seed};
    SCOPED_TRACE(fmt::format("seed {}", seed));
    const Generated g = generate(shape);
    const mfu::Run r = ingest_text(g.text, "foundry.log");
    expect_records(g, r);
    double sum = 0;
    for (std::size_t i = 0; i < r.iterations.size(); ++i)
      sum += r.iterations[i].time_s * r.iterations[i].count;
    EXPECT_NEAR(sum, g.last_clock_s, 1e-6);
    std::vector<double> evals;
    for (const auto& e : r.events)
      if (e.kind == EventKind::kEval) evals.push_back(e.duration_s);
    ASSERT_EQ(evals.size(), g.evals.size());
    for (std::size_t i = 0; i < evals.size(); ++i) EXPECT_NEAR(evals[i], g.evals[i], 1e-6);
  }
}

// Fast batches (0.4-0.6 s) logged every 10: time/train grows by 4-6 s, 11-17 of its 0.36 s
// steps, so the record takes the speed monitor's rate instead (8 samples over the printed
// samples/s); the first block, before the window fills, keeps the clock.
TEST(ComposerGenerator, FastBatchesAreTimedByTheSpeedMonitor) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    const Generated g = generate({100, 10, 0.4, 0.6, 0, 0, seed % 2 == 0, seed});
    const mfu::Run r = ingest_text(g.text, "foundry.log");
    expect_records(g, r);
    for (std::size_t i = 1; i < r.iterations.size(); ++i)
      EXPECT_NEAR(r.iterations[i].time_s, 0.5, 0.1) << i;
  }
}

// The check can fail: were time/train read in seconds instead of hours, slow records would be
// 3,600 times shorter than the generator's answer.
TEST(ComposerGenerator, TheAnswerDependsOnTheClockUnit) {
  Generated g = generate({30, 5, 20, 40, 0, 0, false, 3});
  const mfu::Run r = ingest_text(g.text, "foundry.log");
  ASSERT_GE(r.iterations.size(), 3u);
  EXPECT_GT(r.iterations[2].time_s, 19.0);
  EXPECT_LT(r.iterations[2].time_s, 41.0);
}

}  // namespace
}  // namespace mfu
