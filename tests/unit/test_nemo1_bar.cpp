// NeMo 1 (PyTorch Lightning) progress bars as users paste them: one redraw, whose time can only
// come from tqdm's own rate.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

// NVIDIA/NeMo-Framework-Launcher issue #55: "795/77225 [9:07:58<878:01:48, 41.36s/it, loss=3.1,
// ..., reduced_train_loss=3.090, global_step=794.0, consumed_samples=1.63e+6]". The rate is
// the log's own check: 9:07:58 is 32,878 s, over 795 steps 41.36 s a step.
TEST(NemoBar, ASingleRedrawIsTimedByTheBarsRate) {
  const mfu::Run run = ingest({test::test_data("nemo1_launcher_issue55_bar.log").string()});
  EXPECT_EQ(run.format, "nemo");
  ASSERT_EQ(run.iterations.size(), 1u);
  const Iteration it = run.iterations[0];
  EXPECT_EQ(it.step, 794);
  EXPECT_NEAR(it.time_s, 41.36, 1e-9);
  EXPECT_NEAR(32878.0 / 795, it.time_s, 0.01);
  EXPECT_NEAR(it.loss, 3.090, 1e-6);
}

// tqdm's elapsed time as it prints it: M:SS under an hour, H:MM:SS from one hour on.
std::string tqdm_clock(int seconds) {
  if (seconds < 3600) return fmt::format("{:02d}:{:02d}", seconds / 60, seconds % 60);
  return fmt::format("{}:{:02d}:{:02d}", seconds / 3600, seconds / 60 % 60, seconds % 60);
}

// Generated bars, many members of the class: a job resumed at a random step, whose first
// redraw prints tqdm's rate either as seconds per step ("S.SSs/it") or as steps per second
// ("R.RRit/s", the form tqdm takes below 1 s a step), then later redraws every `gap` steps of
// `step_s` whole seconds each. The right answers, by construction of the text:
//   first record: its rate; 1/R for it/s (R=4.00 -> 0.25 s), S for s/it;
//   each later record: (elapsed - previous elapsed) / gap = step_s, not the rate (which is
//   printed deliberately wrong there, at twice the step, to show the difference is used).
TEST(NemoBar, TheFirstRedrawTakesTheRateInEitherFormLaterOnesTheElapsedTime) {
  std::mt19937 rng(55);
  for (int c = 0; c < 40; ++c) {
    const bool per_second = c % 2 == 0;
    const int steps_per_second_x100 = 101 + static_cast<int>(rng() % 899);   // 1.01..9.99 it/s
    const int seconds_per_step_x100 = 101 + static_cast<int>(rng() % 9000);  // 1.01..91 s/it
    const double first_rate_s =
        per_second ? 100.0 / steps_per_second_x100 : seconds_per_step_x100 / 100.0;
    const std::string rate = per_second ? fmt::format("{}.{:02d}it/s", steps_per_second_x100 / 100,
                                                      steps_per_second_x100 % 100)
                                        : fmt::format("{}.{:02d}s/it", seconds_per_step_x100 / 100,
                                                      seconds_per_step_x100 % 100);
    const int first = 1 + static_cast<int>(rng() % 5000), gap = 1 + static_cast<int>(rng() % 20);
    const int step_s = 1 + static_cast<int>(rng() % 30);
    int elapsed = static_cast<int>(rng() % 7200);
    std::string log;
    for (int k = 0; k < 4; ++k) {
      const int n = first + k * gap;
      log += fmt::format(
          "Epoch 0:   1%|          | {}/90000 [{}<99:00:00, {}, loss=3.1, v_num=, "
          "reduced_train_loss=3.{:03d}, global_step={}.0, consumed_samples=1.6e+6]\n",
          n, tqdm_clock(elapsed), k == 0 ? rate : fmt::format("{}.00s/it", 2 * step_s), k, n - 1);
      elapsed += gap * step_s;
    }
    SCOPED_TRACE(log);
    const mfu::Run run = ingest_text(log, "generated.log");
    EXPECT_EQ(run.format, "nemo");
    ASSERT_EQ(run.iterations.size(), 4u);
    EXPECT_EQ(run.iterations[0].step, first - 1);
    EXPECT_NEAR(run.iterations[0].time_s, first_rate_s, 1e-9);
    for (std::size_t k = 1; k < 4; ++k) {
      EXPECT_EQ(run.iterations[k].step, first - 1 + static_cast<int>(k) * gap);
      EXPECT_NEAR(run.iterations[k].time_s, step_s, 1e-9);
    }
  }
}

// tqdm prints "?it/s" before it has a rate: the first redraw then has no time (unknown, not 0),
// and the next one is timed by the elapsed difference: (0:50 - 0:20) / 3 steps = 10 s.
TEST(NemoBar, NoRateYetLeavesTheFirstRedrawUntimed) {
  const std::string log =
      "Epoch 0:   0%|          | 7/900 [00:20<?, ?it/s, loss=3.1, reduced_train_loss=3.100, "
      "global_step=6.0]\n"
      "Epoch 0:   1%|          | 10/900 [00:50<2:28:20, 10.00s/it, loss=3.1, "
      "reduced_train_loss=3.000, global_step=9.0]\n";
  const mfu::Run run = ingest_text(log, "generated.log");
  ASSERT_EQ(run.iterations.size(), 2u);
  EXPECT_FALSE(known(run.iterations[0].time_s));
  EXPECT_NEAR(run.iterations[1].time_s, 10.0, 1e-9);
}

}  // namespace
}  // namespace mfu
