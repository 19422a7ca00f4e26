// OLMo's console blocks (../shared/samples-next/olmo, PROVENANCE there; allenai/OLMo issue #692
// is the only public OLMo console found). Values by hand from the lines.
#include <gtest/gtest.h>

#include <filesystem>

#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

// Headers at 09:59:26.181, 10:00:05.520 and 10:00:44.815 for steps 1-3: 39.339 s and 39.295 s;
// the speed monitor's batches_per_second=0.0254 says 1 / 0.0254 = 39.37 s (within 0.5%).
// total_tokens grows 1,048,576 a step and total_training_Gflops 5,103,641 (5.1e15 FLOPs a step,
// 4.87e9 a token). tokens_per_second=26,668 for one device against 1,048,576 / 39.339 =
// 26,655 for the job: one device.
TEST(OlmoParser, ReadsTheMetricBlocks) {
  const std::string path = test::next_sample("olmo", "allenai_OLMo_issue692");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/olmo is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "olmo");
  ASSERT_EQ(r.iterations.size(), 3u);
  EXPECT_EQ(r.iterations[0].step, 1);
  EXPECT_FALSE(known(r.iterations[0].time_s));
  EXPECT_NEAR(r.iterations[1].time_s, 39.339, 1e-3);
  EXPECT_NEAR(r.iterations[2].time_s, 39.295, 1e-3);
  EXPECT_NEAR(r.iterations[1].time_s, 1 / 0.0254, 0.005 * 39.37);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(r.iterations[i].tokens, 1048576);
  EXPECT_NEAR(r.iterations[1].model_flops, 5103641e9, 1e6);
  EXPECT_NEAR(r.iterations[0].loss, 12.18, 1e-5);
  EXPECT_EQ(r.meta.number("gpus"), 1);
  EXPECT_EQ(r.meta.number("train_iters"), 739328);
}

}  // namespace
}  // namespace mfu
