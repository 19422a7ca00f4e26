// NeMo 1 (PyTorch Lightning) progress bars as users paste them: one redraw, whose time can only
// come from tqdm's own rate.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mfu
