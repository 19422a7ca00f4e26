#pragma once
// Four ranks' profiler traces with one late rank, whose straggler-free step time is known by
// hand (issue 19, --no-stragglers).
//
// Each of 3 steps is one second on every rank (microseconds from the step's start o):
//   ranks 0-2: compute [0, 400000), all-reduce #1 [400000, 600000), compute [600000, 900000),
//              all-reduce #2 [900000, 1000000)
//   rank 3:    compute [0, 500000) (late by 100 ms), all-reduce #1 [500000, 600000), compute
//              [600000, 950000) (late by 50 ms), all-reduce #2 [950000, 1000000)
// The all-reduces end together (600000 and 1000000): the transfers take 100 ms and 50 ms, the
// rest is the early ranks waiting for rank 3. Had rank 3 arrived with the median (the others),
// a step would be 0.4 + 0.1 + 0.3 + 0.05 = 0.85 s: 150 ms saved a step, 450 ms over the three,
// all of it rank 3's.

#include <fmt/format.h>

#include <string>

namespace mfu::test {

/// Rank `rank` of the four; `late` makes it the straggler (rank 3 in the case above).
inline std::string straggler_rank_trace(int rank, bool late) {
  std::string ev;
  int corr = 1;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  auto kernel = [&](const std::string& name, int stream, double launch, double start, double end,
                    const std::string& extra) {
    add(fmt::format(
        R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {:.1f}, "dur": 1, "args": {{"correlation": {}}}}})",
        launch, corr));
    add(fmt::format(
        R"({{"ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": {}, "ts": {:.1f}, "dur": {:.1f}, "args": {{"correlation": {}, "stream": {}{}}}}})",
        name, stream, start, end - start, corr, stream, extra));
    ++corr;
  };
  const std::string ar = R"(, "Collective name": "allreduce", "Process Group Name": "0")";
  for (int k = 0; k < 3; ++k) {
    const double o = 1e6 * (k + 1);
    add(fmt::format(
        R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "pid": 1, "tid": 1, "ts": {:.1f}, "dur": 1000000}})",
        k + 1, o - 100));
    kernel("sm90_xmma_gemm_bf16", 7, o - 100, o, o + (late ? 500000 : 400000), "");
    kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 20, o - 99, o + (late ? 500000 : 400000),
           o + 600000, ar);
    kernel("sm90_xmma_gemm_bf16", 7, o - 98, o + 600000, o + (late ? 950000 : 900000), "");
    kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 20, o - 97, o + (late ? 950000 : 900000),
           o + 1000000, ar);
  }
  return fmt::format(
      R"({{"schemaVersion": 1, "deviceProperties": [{{"id": 0, "name": "NVIDIA H100 80GB HBM3"}}],
"baseTimeNanoseconds": 1700000000000000000,
"distributedInfo": {{"backend": "nccl", "rank": {}, "world_size": 4}},
"traceEvents": [
{}
]}})",
      rank, ev);
}

}  // namespace mfu::test
