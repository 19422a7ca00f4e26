// Profiler traces: a crafted two-rank trace whose overlap, exposed communication, idle,
// host-bound gap, collective wait and straggler are known by hand.
#include <gtest/gtest.h>

#include <filesystem>

#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "mfu/trace.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

namespace fs = std::filesystem;

/// One rank: step 1 on the CPU from 0 to 100 us; kernels (us): compute A [10,40], B [60,80],
/// C [90,100] (launched at 85: the device idles from 80 waiting for the CPU), and one
/// all-reduce on its own stream [nccl0, nccl1].
std::string rank_trace(int rank, double nccl0, double nccl1) {
  return R"J({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
  "baseTimeNanoseconds": 1700000000000000000,
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0.000, "dur": 100.000},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1.000, "dur": 1, "args": {"correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2.000, "dur": 1, "args": {"correlation": 2}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 3.000, "dur": 1, "args": {"correlation": 4}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 85.000, "dur": 1, "args": {"correlation": 3}},
  {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7, "ts": 10.000, "dur": 30.000, "args": {"correlation": 1, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 20, "ts": )J" +
         std::to_string(nccl0) + R"J(, "dur": )J" + std::to_string(nccl1 - nccl0) +
         R"J(, "args": {"correlation": 4, "stream": 20, "Collective name": "allreduce", "Process Group Name": "0", "In msg nelems": 1048576, "dtype": "BFloat16"}},
  {"ph": "X", "cat": "kernel", "name": "void flash_fwd_kernel<Flash_fwd_kernel_traits>", "pid": 0, "tid": 7, "ts": 60.000, "dur": 20.000, "args": {"correlation": 2, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel", "pid": 0, "tid": 7, "ts": 90.000, "dur": 10.000, "args": {"correlation": 3, "stream": 7}}
  ],
  "distributedInfo": {"backend": "nccl", "rank": )J" +
         std::to_string(rank) + R"J(, "world_size": 2}
})J";
}

fs::path write_ranks() {
  const fs::path dir = fs::temp_directory_path() / ("mfu-trace-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  test::write_file(dir / "r0.json", rank_trace(0, 30, 70));
  test::write_file(dir / "r1.json", rank_trace(1, 50, 70));  // rank 1 reaches the all-reduce last
  return dir;
}

TEST(Trace, OneRankDeviceAccountingByHand) {
  const mfu::Run run = ingest_text(rank_trace(0, 30, 70), "rank0.json");
  EXPECT_EQ(run.format, "kineto");
  ASSERT_TRUE(run.trace);
  const TraceRankSummary& r = run.trace->ranks.at(0);
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.rank_source, "distributedInfo");  // written after traceEvents
  EXPECT_EQ(r.device_name, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(r.steps.size(), 1u);
  const TraceStep& s = r.steps[0];
  // Window: first kernel (10 us) to the last kernel's end (100 us).
  EXPECT_NEAR(s.wall_s, 90e-6, 1e-12);
  EXPECT_NEAR(s.compute_s, 60e-6, 1e-12);       // [10,40] + [60,80] + [90,100]
  EXPECT_NEAR(s.comm_s, 40e-6, 1e-12);          // [30,70]
  EXPECT_NEAR(s.comm_exposed_s, 20e-6, 1e-12);  // [40,60]: no compute running
  EXPECT_NEAR(s.idle_s, 10e-6, 1e-12);          // [80,90]
  EXPECT_NEAR(s.idle_host_s, 5e-6, 1e-12);      // [80,85]: the next kernel was not launched yet
  EXPECT_NEAR(r.overlap_ratio, 0.5, 1e-12);     // [30,40] and [60,70] hidden of 40 us
  EXPECT_EQ(r.comm_kernels, 1u);
  // The record: wall = compute + exposed comm + idle.
  ASSERT_EQ(run.iterations.size(), 1u);
  EXPECT_NEAR(run.iterations[0].time_s, 90e-6, 1e-12);
  EXPECT_EQ(run.meta.number("gpus"), 2);
}

// with_flops=True: CPU operators carry "flops" in their arguments (an integer or a float); the
// step's executed FLOPs are their sum, by hand 1e9 + 2.5e9 = 3.5e9; an operator without the
// argument adds nothing.
TEST(Trace, ProfiledFlopsOfTheOperatorsAreSummed) {
  std::string trace = rank_trace(0, 30, 70);
  const std::string ops =
      R"J({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 5.000, "dur": 2, "args": {"External id": 9, "flops": 1000000000}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 50.000, "dur": 2, "args": {"External id": 10, "flops": 2.5e9}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 60.000, "dur": 1, "args": {"External id": 11}},
  )J";
  const std::size_t at = trace.find("{\"ph\": \"X\", \"cat\": \"cuda_runtime\"");
  ASSERT_NE(at, std::string::npos);
  trace.insert(at, ops);
  const mfu::Run run = ingest_text(trace, "rank0.json");
  ASSERT_TRUE(run.trace);
  const TraceRankSummary& r = run.trace->ranks.at(0);
  EXPECT_TRUE(r.has_flops);
  EXPECT_DOUBLE_EQ(r.flops, 3.5e9);
}

TEST(Trace, TwoRanksMatchTheCollectiveAndNameTheStraggler) {
  const fs::path dir = write_ranks();
  const mfu::Run run = ingest({dir.string()});
  ASSERT_TRUE(run.trace);
  const TraceSummary& t = *run.trace;
  ASSERT_EQ(t.ranks.size(), 2u);
  EXPECT_EQ(t.matched_collectives, 1u);
  ASSERT_EQ(t.stragglers.size(), 1u);
  EXPECT_EQ(t.stragglers[0], 1);
  // Rank 0 spent 40 us in the all-reduce, rank 1 20 us: 20 us of rank 0's is waiting, and half
  // of its all-reduce ran under compute, so 10 us of exposed time is wait and 10 us transfer.
  EXPECT_NEAR(t.ranks[0].wait_s, 10e-6, 1e-12);
  EXPECT_NEAR(t.ranks[0].transfer_s, 10e-6, 1e-12);
  EXPECT_NEAR(t.ranks[1].wait_s, 0.0, 1e-12);
  EXPECT_EQ(t.ranks[1].arrived_last, 1u);
  // Rank 1: comm [50,70], exposed [50,60]; idle [40,50] and [80,90].
  EXPECT_NEAR(t.ranks[1].comm_exposed_s, 10e-6, 1e-12);
  EXPECT_NEAR(t.ranks[1].idle_s, 20e-6, 1e-12);
  // The merged run keeps the slowest rank per step; both windows are 90 us here.
  ASSERT_EQ(run.iterations.size(), 1u);
  EXPECT_NEAR(run.iterations[0].time_s, 90e-6, 1e-12);
  const Analysis a = analyze(run, AnalyzeOptions{});
  double sum = 0;
  for (const auto& b : a.buckets) sum += b.seconds;
  EXPECT_NEAR(sum, a.wall_time_s, 1e-15);
  EXPECT_EQ(a.gpu, "h100-sxm");  // from deviceProperties
  fs::remove_all(dir);
}

TEST(Trace, TimestampsKeepNanoseconds) {
  // 1.001 us apart at an epoch-scale timestamp: a double in microseconds would round this.
  const std::string t = R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 1712195495502094.125, "dur": 1.000, "args": {"correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 1712195495502096.126, "dur": 1.000, "args": {"correlation": 2}}]})";
  const mfu::Run run = ingest_text(t, "ns.json");
  const TraceRankSummary& r = run.trace->ranks.at(0);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_NEAR(r.steps[0].wall_s, 3.001e-6, 1e-15);
  EXPECT_NEAR(r.steps[0].idle_s, 1.001e-6, 1e-15);
}

TEST(Trace, RankFromTheFileNameWhenDistributedInfoIsMissingAndUnknownOtherwise) {
  const std::string t =
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]})";
  const fs::path dir =
      fs::temp_directory_path() / ("mfu-trace-names-" + std::to_string(::getpid()));
  test::write_file(dir / "job_rank-3.pt.trace.json", t);
  const mfu::Run named = ingest({(dir / "job_rank-3.pt.trace.json").string()});
  EXPECT_EQ(named.trace->ranks.at(0).rank, 3);
  EXPECT_EQ(named.trace->ranks.at(0).rank_source, "file name");
  const mfu::Run anon = ingest_text(t, "trace.json");
  EXPECT_EQ(anon.trace->ranks.at(0).rank, -1);
  fs::remove_all(dir);
}

TEST(Trace, CutOffTraceIsAnalyzedAndSaysSo) {
  std::string t = rank_trace(0, 30, 70);
  t = t.substr(0, t.find("\"void flash_fwd_kernel"));  // cut mid-array
  const mfu::Run run = ingest_text(t, "cut.json");
  EXPECT_TRUE(run.truncated);
  EXPECT_FALSE(run.trace->ranks.at(0).warnings.empty());
}

TEST(Trace, WarnsWhenAMultiRankTraceHasNoCommunicationKernels) {
  const std::string t = R"({"distributedInfo": {"rank": 0, "world_size": 8}, "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "myCustomGradSync", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]})";
  const mfu::Run run = ingest_text(t, "t.json");
  bool warned = false;
  for (const auto& w : run.trace->warnings)
    warned = warned || w.find("no communication kernel") != std::string::npos;
  EXPECT_TRUE(warned);
  IngestOptions o;
  o.comm_kernel_patterns = {"customgradsync"};
  const mfu::Run run2 = ingest_text(t, "t.json", o);
  EXPECT_EQ(run2.trace->ranks.at(0).comm_kernels, 1u);
}

TEST(Trace, KernelClassesFollowTheTable) {
  const KernelPatterns p = KernelPatterns::defaults();
  EXPECT_EQ(p.classify("ncclKernel_AllReduce_RING_LL_Sum_float(...)", "kernel"), KernelKind::kComm);
  EXPECT_EQ(p.classify("ncclDevKernel_AllGather_RING_LL(...)", "kernel"), KernelKind::kComm);
  EXPECT_EQ(p.classify("Memcpy DtoD (Device -> Device)", "gpu_memcpy"), KernelKind::kMemory);
  EXPECT_EQ(p.classify("Cijk_Alik_Bljk_SB_Bias", "kernel"),
            KernelKind::kCompute);  // ROCm GEMM, not comm
  EXPECT_EQ(p.classify("hipLaunchKernel", "kernel"), KernelKind::kCompute);
  EXPECT_EQ(p.classify("void cutlass::Kernel<cutlass_80_tensorop_async_copy>", "kernel"),
            KernelKind::kCompute);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// An early-2021 Kineto trace (PyTorch 1.8: categories "Operator"/"Runtime"/"Kernel", the step
// markers ProfilerStep#5..#10 are Operator events; ../shared/samples-next/kineto_trace,
// PROVENANCE.md). By hand: six steps, 5..10; their CPU spans add up to 151.73 + 118.12 + 108.41
// + 124.12 + 115.03 + 152.07 = 769.5 ms, and the device-side windows mfu measures come within
// a few percent of it; the DataLoader operators are data wait, not idle time.
TEST(KinetoTrace, EarlySchemaGivesItsProfilerSteps) {
  const auto dir = test::samples_next_dir();
  if (dir.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next is absent");
  const mfu::Run run =
      ingest({(dir / "kineto_trace" /
               "pytorch_kineto_tb_plugin_samples_resnet50_profiler_api_num_workers_4_"
               "worker0_2021-01.pt.trace.json.gz")
                  .string()});
  ASSERT_EQ(run.iterations.size(), 6u);
  double total = 0;
  for (std::size_t i = 0; i < run.iterations.size(); ++i) {
    const Iteration it = run.iterations[i];
    EXPECT_EQ(it.step, static_cast<std::int64_t>(5 + i));
    EXPECT_GT(it.at(Phase::kData), 0.0) << "step " << it.step;
    total += it.time_s;
  }
  EXPECT_NEAR(total, 0.7695, 0.7695 * 0.05);
}

}  // namespace
}  // namespace mfu
