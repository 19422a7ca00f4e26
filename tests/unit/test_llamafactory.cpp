// LLaMA-Factory's trainer_log.jsonl: a real excerpt (tests/data/README.md), the samples of
// ../shared/samples-next/llamafactory where they exist, and a generator of files written by
// several processes at their own pace, with a resumed job, each with its right answer by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

// hiyouga/LlamaFactory issue #774, the last lines of a Llama-2 pre-training: steps 3200-3230 at
// 5:13:22, 5:14:24, 5:15:22, 5:16:20. The first line stands for the 3200 steps since training
// began (18802 s, 5.876 s each); then 62, 58 and 58 s for 10 steps each. The last line has no
// loss (the summary at 100%): not a step record. The steps are the file's, not renumbered.
TEST(LlamaFactoryParser, StepsAndTimesAreTheFilesOwn) {
  const mfu::Run r = ingest({test::test_data("llamafactory_issue774_trainer_log.jsonl").string()});
  EXPECT_EQ(r.format, "llamafactory");
  ASSERT_EQ(r.iterations.size(), 4u);
  EXPECT_EQ(r.iterations[0].step, 3200);
  EXPECT_EQ(r.iterations[0].count, 3200u);
  EXPECT_NEAR(r.iterations[0].time_s, 18802.0 / 3200, 1e-9);
  const double seconds[] = {62, 58, 58};
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(r.iterations[i].step, 3200 + 10 * static_cast<std::int64_t>(i));
    EXPECT_EQ(r.iterations[i].count, 10u);
    EXPECT_NEAR(r.iterations[i].time_s, seconds[i - 1] / 10, 1e-9);
  }
  EXPECT_NEAR(r.iterations[3].loss, 4.4598, 1e-6);
  EXPECT_EQ(r.meta.number("train_iters"), 3235);
  EXPECT_NEAR(test::timed_seconds(r), 5 * 3600 + 16 * 60 + 20, 1e-6);
}

// samples-next/llamafactory. suzushi-tw's QLoRA run on one A10, logged every 5 steps: its last
// line, step 8710 at "4 days, 7:18:24" = 371,904 s, is the whole run; its train_results.json
// says train_runtime 371,992 s (written 88 s later, at the end): within 0.1%.
// rameyjm7's file: two processes (independent 1-GPU trainings) wrote every step, drifting up to
// 30 steps apart, then a resumed job from the checkpoint at step 5000 whose clock starts again
// (5010 at 0:02:38). Read once per step: job 1 to step 5240 (its first writer at 22:06:20 =
// 79,580 s), job 2 from 5010 (whose first 158 s are not timed: the checkpoint step is not
// printed) to 6560 at 6:35:21 = 23,721 s; 79,580 + 23,721 - 158 = 103,143 s, within 0.1%
// (which process logged a step first moves a few seconds). 240 steps redone.
TEST(LlamaFactoryParser, ReadsTheSamples) {
  const std::string one = test::next_sample("llamafactory", "suzushi-tw_luojiu-7b-base_llama2");
  const std::string two = test::next_sample("llamafactory", "rameyjm7");
  if (one.empty() || two.empty())
    MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/llamafactory is not here");
  const mfu::Run a10 = ingest({one});
  EXPECT_EQ(a10.format, "llamafactory");
  EXPECT_EQ(a10.iterations.back().step, 8710);
  EXPECT_NEAR(test::timed_seconds(a10), 371904, 1e-6);
  EXPECT_NEAR(test::timed_seconds(a10), 371992.1593, 0.001 * 371992);

  const mfu::Run h200 = ingest({two});
  EXPECT_EQ(h200.format, "llamafactory");
  EXPECT_TRUE(test::has_diagnostic(h200, "2 processes wrote this file"));
  EXPECT_NEAR(test::timed_seconds(h200), 103143, 0.001 * 103143);
  std::int64_t lost = 0;
  for (const auto& e : h200.events)
    if (e.kind == EventKind::kRestart) lost += e.steps_lost;
  EXPECT_EQ(lost, 240);
}

// ---- files written by several processes ---------------------------------------------------

struct Line {
  double t;  // the writer's true clock
  std::string text;
};

std::string clock(double seconds) {
  const auto s = static_cast<long>(std::floor(seconds));
  if (s >= 86400)
    return fmt::format("{} day{}, {}:{:02}:{:02}", s / 86400, s / 86400 > 1 ? "s" : "",
                       s % 86400 / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

std::string log_line(std::int64_t step, double elapsed) {
  return fmt::format(
      "{{\"current_steps\": {}, \"total_steps\": 100000, \"loss\": {}, \"lr\": "
      "1e-05, \"epoch\": 0.5, \"elapsed_time\": \"{}\"}}\n",
      step, 1.0 + step * 1e-4, clock(elapsed));
}

/// `writers` processes log every 10 steps from `first` to `last`, writer w at (1.5 + 0.2 w) s a
/// step, their clocks starting at 0; the file holds their lines in the order they were written.
std::string segment(int writers, std::int64_t first, std::int64_t last) {
  std::vector<Line> lines;
  for (int w = 0; w < writers; ++w) {
    const double pace = 1.5 + 0.2 * w;
    for (std::int64_t s = first + 10; s <= last; s += 10)
      lines.push_back(
          {static_cast<double>(s - first) * pace + 0.01 * w, log_line(s, (s - first) * pace)});
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.t < b.t; });
  std::string out;
  for (const auto& l : lines) out += l.text;
  return out;
}

// Writer 0 is the fastest, so it logs every step first: each record is its 10 steps in 15 s
// (1.5 s a step) whatever the others print in between, and the file's first record counts from
// step 0. A second job resumes from step 3000 after the first reached 4000: its clock starts
// again, its first line is not timed (the checkpoint step is not printed), and 1000 steps are
// redone. Time by hand: job 1: 4000 x 1.5 = 6000 s; job 2: steps 3010..5000, (5000 - 3010) x 1.5
// = 2985 s.
TEST(LlamaFactoryWriters, EachStepOnceTimedByItsOwnProcess) {
  for (int writers = 1; writers <= 3; ++writers) {
    SCOPED_TRACE(fmt::format("{} writers", writers));
    const std::string text = segment(writers, 0, 4000) + segment(writers, 3000, 5000);
    const mfu::Run r = ingest_text(text, "trainer_log.jsonl");
    EXPECT_EQ(r.format, "llamafactory");
    ASSERT_EQ(r.iterations.size(), 400u + 200u);
    for (std::size_t i = 0; i < r.iterations.size(); ++i) {
      const Iteration it = r.iterations[i];
      EXPECT_NEAR(it.loss, 1.0 + it.step * 1e-4, 1e-6);
      if (i == 400) {
        EXPECT_EQ(it.step, 3010);
        EXPECT_FALSE(known(it.time_s));
        continue;
      }
      EXPECT_NEAR(it.time_s, 1.5, 1e-9) << "step " << it.step;
    }
    EXPECT_NEAR(test::timed_seconds(r), 6000 + 2985, 1e-6);
    std::int64_t lost = 0;
    for (const auto& e : r.events)
      if (e.kind == EventKind::kRestart) lost += e.steps_lost;
    EXPECT_EQ(lost, 1000);
    EXPECT_EQ(test::has_diagnostic(r, "processes wrote this file"), writers > 1);
  }
}

// ---- the Trainer's console under LLaMA-Factory's logger ----------------------------------

// samples-next/llamafactory, LzZzZx328's web-UI running_log.txt: "[INFO|2024-11-26 22:09:01]
// logging.py:157 >> {'loss': 2.2818, ..., 'epoch': 0.29}" with no step and no bar. The header
// says 1,000 epochs and 17,000 steps (17 a epoch), total batch 128 = 1 per device x 64
// accumulation x 2 processes; the first dict's epoch 0.29 x 17 = 4.93 -> logging every 5 steps.
// Dict k is step 5k, timed by the logger's clock: 22:09:01 -> 22:10:54 is 113 s for 5 steps
// (22.6 s a step). The last dict (epoch 123.48) is the 421st: step 2105, and 123.48 x 17.05
// (1091 micro-batches / 64 a step) = 2105 agrees.
TEST(HfTrainerConsole, StepsFromTheHeaderAndTimesFromTheLoggersClock) {
  const std::string path = test::next_sample("llamafactory", "LzZzZx328");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/llamafactory is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "hf-trainer");
  EXPECT_EQ(r.meta.number("gpus"), 2);
  EXPECT_EQ(r.meta.number("global_batch"), 128);
  ASSERT_EQ(r.iterations.size(), 421u);
  EXPECT_EQ(r.iterations[0].step, 5);
  EXPECT_EQ(r.iterations[1].step, 10);
  EXPECT_NEAR(r.iterations[1].time_s, 113.0 / 5, 1e-9);
  EXPECT_EQ(r.iterations.back().step, 2105);
}

/// A console of `dicts` loss dicts every `every` steps with `per_epoch` steps a epoch, the
/// epoch printed as the Trainer does (2 decimals), one dict every 10 s.
std::string hf_console(int dicts, int every, double per_epoch) {
  std::string out = fmt::format(
      "***** Running training *****\n  Num Epochs = 1,000\n  Total optimization steps = {}\n",
      static_cast<long>(per_epoch * 1000));
  for (int k = 1; k <= dicts; ++k)
    out += fmt::format(
        "[INFO|2024-11-26 22:{:02}:{:02}] logging.py:157 >> {{'loss': 1.5, "
        "'learning_rate': 1e-05, 'epoch': {:.2f}}}\n",
        k * 10 / 60, k * 10 % 60, k * every / per_epoch);
  return out;
}

// The class of consoles without a step counter: whatever the steps per epoch (8 to 5490) and
// the logging interval (1 to 500), dict k is step k x every and each record 10 s / every.
TEST(HfTrainerConsole, DictsAreNumberedByTheLoggingInterval) {
  struct Case {
    int every;
    double per_epoch;
  };
  for (const Case c :
       {Case{5, 17}, Case{1, 8}, Case{10, 64}, Case{50, 1500}, Case{500, 5490}, Case{25, 333}}) {
    SCOPED_TRACE(fmt::format("every {} of {} a epoch", c.every, c.per_epoch));
    const mfu::Run r = ingest_text(hf_console(30, c.every, c.per_epoch), "console.log");
    EXPECT_EQ(r.format, "hf-trainer");
    ASSERT_EQ(r.iterations.size(), 30u);
    for (std::size_t k = 0; k < 30; ++k) {
      EXPECT_EQ(r.iterations[k].step, c.every * static_cast<std::int64_t>(k + 1));
      if (k > 0) {
        EXPECT_NEAR(r.iterations[k].time_s, 10.0 / c.every, 1e-9);
      }
    }
  }
}

}  // namespace
}  // namespace mfu
