// ../shared/samples-next/kineto_trace and megatron_ranks (PROVENANCE there): profiler traces of
// three schemas and vendors, and rank-prefixed Megatron-LM and torchtitan lines. Values by hand
// from the files.
#include <gtest/gtest.h>

#include <filesystem>

#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

// AMD-AGI/TraceLens, MI300X rank 0 of 8 (PyTorch 2.x schema, RCCL): ProfilerStep#15 is 16.80 ms
// on the host and its device window (first kernel of step 15 to the first of step 16) is the
// same 16.80 ms. The GPU then falls behind the host (step 16's kernels, RCCL spinning among
// them, take 51 ms while the host annotates 15.95 ms): the device windows are the step times.
TEST(KinetoNext, AmdTraceIsReadWithItsDevices) {
  const std::string path = test::next_sample("kineto_trace", "AMD-AGI_TraceLens_mi300");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("samples-next/kineto_trace is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "kineto");
  ASSERT_EQ(r.iterations.size(), 3u);
  EXPECT_EQ(r.iterations[0].step, 15);
  EXPECT_NEAR(r.iterations[0].time_s, 0.01680, 0.00001);
  EXPECT_EQ(r.meta.number("gpus"), 8);
  EXPECT_EQ(r.meta.text("gpu_name").value_or(""), "AMD Instinct MI300X");
}

// pytorch/kineto's 2021 ResNet-50 trace (PyTorch 1.8 schema, capitalised categories): six
// ProfilerStep#5-#10 of 151.73, 118.12, 108.41, 124.12, 115.03, 152.07 ms on the host. The
// device windows of the four steps inside (#6-#9: 465.68 ms on the host) agree within 2%; the
// first and last window start and end at their own kernels.
TEST(KinetoNext, EarlySchemaStepsAgreeWithTheHostsAnnotations) {
  const std::string path = test::next_sample("kineto_trace", "pytorch_kineto_tb_plugin");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("samples-next/kineto_trace is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "kineto");
  ASSERT_EQ(r.iterations.size(), 6u);
  double inside = 0;
  for (std::size_t i = 1; i < 5; ++i) inside += r.iterations[i].time_s;
  const double host = 0.11812 + 0.10841 + 0.12412 + 0.11503;
  EXPECT_NEAR(inside, host, 0.02 * host);
}

// facebookresearch/param: ProfilerStep#10 of ranks 0, 1 and 3 of one 8 x V100 DLRM run, given
// as one job: the ranks are told apart (distributedInfo), and the step is the slowest rank's.
TEST(KinetoNext, RanksOfOneRunAreOneJob) {
  std::vector<std::string> paths;
  for (const char* w : {"worker0", "worker1", "worker3"}) {
    const std::string p = test::next_sample(
        "kineto_trace", std::string("facebookresearch_param_dlrm_kineto_8xV100_") + w);
    if (p.empty()) MFU_FAIL_WITHOUT_INPUT("samples-next/kineto_trace is not here");
    paths.push_back(p);
  }
  double slowest = 0;
  for (const auto& p : paths) {
    const mfu::Run one = ingest({p});
    ASSERT_EQ(one.iterations.size(), 1u);
    slowest = std::max(slowest, one.iterations[0].time_s);
  }
  const mfu::Run job = ingest(paths);
  ASSERT_EQ(job.iterations.size(), 1u);
  EXPECT_EQ(job.iterations[0].step, 10);
  EXPECT_DOUBLE_EQ(job.iterations[0].time_s, slowest);
  EXPECT_EQ(job.ranks.size(), 3u);
  EXPECT_EQ(job.meta.number("gpus"), 8);
}

// NVIDIA/Megatron-LM issue #1570: iterations 1-3 of 21847.9, 3286.6 and 3182.4 ms at 4.5, 30.2
// and 31.2 TFLOP/s per GPU, global batch 32. pytorch/torchtitan PR #1437: "[rank0]:"-prefixed
// steps 3-10, tflops 3.15 at step 3, step 4 0.468 s after it by the timestamps.
TEST(RanksNext, PrefixedMegatronAndTorchtitanLines) {
  const std::string mega = test::next_sample("megatron_ranks", "NVIDIA_Megatron-LM_issue1570");
  const std::string titan = test::next_sample("megatron_ranks", "pytorch_torchtitan_pr1437");
  if (mega.empty() || titan.empty())
    MFU_FAIL_WITHOUT_INPUT("samples-next/megatron_ranks is not here");
  const mfu::Run m = ingest({mega});
  EXPECT_EQ(m.format, "megatron");
  ASSERT_EQ(m.iterations.size(), 3u);
  const double ms[] = {21847.9, 3286.6, 3182.4}, tflops[] = {4.5, 30.2, 31.2};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(m.iterations[i].time_s, ms[i] / 1000, 1e-9);
    EXPECT_NEAR(m.iterations[i].reported_flops_per_gpu, tflops[i] * 1e12, 1e3);
  }
  const mfu::Run t = ingest({titan});
  EXPECT_EQ(t.format, "torchtitan");
  ASSERT_EQ(t.iterations.size(), 8u);
  EXPECT_EQ(t.iterations[0].step, 3);
  EXPECT_EQ(t.iterations[0].rank, 0);
  EXPECT_NEAR(t.iterations[0].reported_flops_per_gpu, 3.15e12, 1e3);
  EXPECT_NEAR(t.iterations[1].time_s, 0.468, 1e-3);
}

}  // namespace
}  // namespace mfu
