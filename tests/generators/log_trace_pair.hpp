#pragma once
// A log without timers and a profiler trace of three of its steps, with a composition known by
// hand (issue 19).
//
// The log: 40 steps of 1.000 s on 8 x H100 SXM (dense BF16 989.5 TFLOP/s, NVIDIA H100
// datasheet), 3.1664e15 model FLOPs a step: the ideal is 3.1664e15 / (8 x 989.5e12) = 0.400 s,
// so the waterfall holds 40 x 0.4 = 16 s of compute at peak and 24 s the log cannot attribute.
//
// The trace (rank 0 of 8, an H100): ProfilerStep#10..#12, each one second on the device
// (microseconds from the step's first kernel at o):
//   [0, 550000)        GEMM (compute)                          0.55 s
//   [550000, 700000)   NCCL all-reduce, nothing else running   0.15 s exposed communication
//   [700000, 750000)   device-to-device memcpy alone           0.05 s exposed copies
//   [750000, 1000000)  idle; the next step's first kernel is launched at 800000, so
//                      [750000, 800000) is host-bound idle     0.05 s
//                      and [800000, 1000000) device idle       0.20 s
// and ProfilerStep#13 holds one 10 us kernel that closes step 12's window. The CPU runs 0.2 s
// ahead: step k's CPU span is [o - 200000, o + 800000) and its kernels are launched at its start.
//
// Above the ideal 0.4 s of each traced second lie: compute below peak 0.55 - 0.40 = 0.15,
// communication 0.15, copies 0.05, host-bound idle 0.05, device idle 0.20 (0.60 s in all). The
// 24 s unattributed split in those proportions: below peak 6 s, communication 6 s, copies (the
// data / I/O bucket) 2 s, idle 2 + 8 = 10 s. Step 13 adds 6 us of compute below peak to the
// 1.8 s of the three full steps: a relative error of 3e-6.

#include <fmt/format.h>

#include <string>

namespace mfu::test {

inline std::string pair_log(double step_s = 1.0) {
  std::string s = "{\"type\":\"meta\",\"gpus\":8,\"gpu\":\"h100-sxm\",\"dtype\":\"bf16\"}\n";
  for (int i = 1; i <= 40; ++i)
    s += fmt::format("{{\"step\":{},\"time_s\":{},\"model_flops\":3.1664e15,\"tokens\":262144}}\n",
                     i, step_s);
  return s;
}

/// `device` names the GPU, `world` the world size, `first_step` the first ProfilerStep number,
/// `scale` stretches every duration (2: steps of 2 s).
inline std::string pair_trace(const std::string& device = "NVIDIA H100 80GB HBM3", int world = 8,
                              int first_step = 10, double scale = 1.0) {
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  auto us = [&](double v) { return fmt::format("{:.3f}", v * scale); };
  int corr = 1;
  auto kernel = [&](const char* cat, const char* name, int stream, double launch, double start,
                    double dur) {
    add(fmt::format(
        R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {}, "dur": 1, "args": {{"correlation": {}}}}})",
        us(launch), corr));
    add(fmt::format(
        R"({{"ph": "X", "cat": "{}", "name": "{}", "pid": 0, "tid": {}, "ts": {}, "dur": {}, "args": {{"correlation": {}, "stream": {}}}}})",
        cat, name, stream, us(start), us(dur), corr, stream));
    ++corr;
  };
  for (int k = 0; k < 4; ++k) {
    const double o = 1e6 * (k + 1);
    add(fmt::format(
        R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "pid": 1, "tid": 1, "ts": {}, "dur": {}}})",
        first_step + k, us(o - 200000), us(1e6)));
    if (k == 3) {
      kernel("kernel", "sm90_xmma_gemm_bf16", 7, o - 200000, o, 10);
      break;
    }
    kernel("kernel", "sm90_xmma_gemm_bf16", 7, o - 200000, o, 550000);
    kernel("kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 20, o - 199999, o + 550000,
           150000);
    kernel("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 7, o - 199998, o + 700000, 50000);
  }
  return fmt::format(
      R"({{"schemaVersion": 1, "deviceProperties": [{{"id": 0, "name": "{}"}}],
"baseTimeNanoseconds": 1700000000000000000,
"distributedInfo": {{"backend": "nccl", "rank": 0, "world_size": {}}},
"traceEvents": [
{}
]}})",
      device, world, ev);
}

}  // namespace mfu::test
