// When mfu cannot count the work itself (no model, or no GPU count), the headline gives the
// framework's own figure, labelled as such: its FLOP/s per GPU over the peak (no GPU count
// needed), else the MFU it prints; an impossible one is not shown as a result.
#include <gtest/gtest.h>

#include <sstream>

#include "mfu/analysis.hpp"
#include "mfu/ingest.hpp"
#include "mfu/report.hpp"

namespace mfu {
namespace {

std::string text_report(const Analysis& a, const mfu::Run& run) {
  std::ostringstream out;
  render_analysis(a, run, OutputFormat::kText, RenderOptions{}, out);
  return out.str();
}

/// Four steps of 1 s printing `tflops` TFLOP/s per GPU and an MFU of `printed` percent.
mfu::Run framework_run(double tflops, double printed) {
  std::string text;
  for (int s = 1; s <= 4; ++s)
    text += "{\"step\":" + std::to_string(s) +
            ",\"time_s\":1.0,\"achieved_flops_per_s_per_gpu\":" + std::to_string(tflops * 1e12) +
            ",\"mfu\":" + std::to_string(printed / 100) + "}\n";
  return ingest_text(text, "run.jsonl");
}

// 395.8 TFLOP/s per GPU on an H100 SXM (989.5 TFLOP/s dense bf16, NVIDIA's datasheet): 40.0%,
// with no GPU count and no model given.
TEST(FrameworkHeadline, PerGpuFlopsGiveMfuWithoutTheGpuCount) {
  AnalyzeOptions opt;
  opt.gpu = "h100-sxm";
  const mfu::Run run = framework_run(395.8, 38.0);
  const Analysis a = analyze(run, opt);
  EXPECT_FALSE(a.mfu.has_value());
  ASSERT_TRUE(a.framework_mfu_steady.has_value());
  EXPECT_NEAR(*a.framework_mfu_steady, 395.8 / 989.5, 1e-9);
  const std::string h = text_report(a, run);
  EXPECT_NE(h.find("MFU 40.0% by the framework's own FLOP/s count"), std::string::npos) << h;
}

// Without a peak, the MFU the log prints (38%), as the framework prints it.
TEST(FrameworkHeadline, PrintedMfuWhenNoPeakIsKnown) {
  const mfu::Run run = framework_run(395.8, 38.0);
  const Analysis a = analyze(run, {});
  ASSERT_TRUE(a.framework_printed_mfu.has_value());
  EXPECT_NEAR(*a.framework_printed_mfu, 0.38, 1e-6);
  const std::string h = text_report(a, run);
  EXPECT_NE(h.find("MFU 38.0% as the framework prints it"), std::string::npos) << h;
}

// The check can fail: 2,000 TFLOP/s per GPU on an H100 is 202% of its peak, and a printed MFU of
// 150% is no better: neither becomes the headline.
TEST(FrameworkHeadline, AnImpossibleFrameworkFigureIsNotTheHeadline) {
  AnalyzeOptions opt;
  opt.gpu = "h100-sxm";
  const mfu::Run run = framework_run(2000, 150);
  const Analysis a = analyze(run, opt);
  const std::string h = text_report(a, run);
  EXPECT_NE(h.find("MFU unknown"), std::string::npos) << h;
}

}  // namespace
}  // namespace mfu
