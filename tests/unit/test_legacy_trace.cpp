// The legacy PyTorch profiler's trace (PyTorch without Kineto, e.g. Debian's 1.13): a bare JSON
// array of CPU events with ProfilerStep#N spans and no "cat". tests/data has a real one (its
// README says how it was made): three profiled steps, whose spans are counted here by hand.
#include <gtest/gtest.h>

#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

TEST(LegacyTrace, ABareEventArrayIsReadAsACpuOnlyTrace) {
  const mfu::Run run = ingest({test::test_data("pytorch113_legacy_profiler_trace.json").string()});
  EXPECT_EQ(run.format, "kineto");
  // ProfilerStep#1 ts 223 us, #2 ts 1119, #3 ts 1807 dur 647: windows 896, 688, 647 us.
  ASSERT_EQ(run.iterations.size(), 3U);
  EXPECT_NEAR(run.iterations[0].time_s, 896e-6, 1e-9);
  EXPECT_NEAR(run.iterations[1].time_s, 688e-6, 1e-9);
  EXPECT_NEAR(run.iterations[2].time_s, 647e-6, 1e-9);
  bool said = false;
  for (const auto& d : run.diagnostics)
    said |= d.message.find("CPU-only trace") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace mfu
