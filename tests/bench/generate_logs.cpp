// Writes large synthetic logs for benchmarks: mfu's native JSON Lines, a Megatron-LM text log
// and a PyTorch-profiler (Kineto) trace, of about the size asked. The line and event layouts
// follow the real formats (see tests/data and ../shared/samples); the numbers vary
// deterministically so that parsers cannot take shortcuts.
//
#include "generate_logs.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mfu_bench {
namespace {

/// A small deterministic generator (xorshift), so runs are repeatable.
struct Rng {
  std::uint64_t s = 0x9e3779b97f4a7c15ULL;
  double uniform() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<double>(s >> 11) / 9007199254740992.0;
  }
};

/// A native step's four phase timers, drawn around 1 s a step.
struct Phases {
  double fwd, bwd, comm, data;
  [[nodiscard]] double total() const { return fwd + bwd + comm + data; }
};

Phases draw_phases(Rng& r) {
  Phases p{};
  p.fwd = 0.30 + 0.01 * r.uniform();
  p.bwd = 0.60 + 0.02 * r.uniform();
  p.comm = 0.08 + 0.01 * r.uniform();
  p.data = 0.002 * r.uniform();
  return p;
}

/// The rest of a native line: its "phases" object, printed with six decimals, and the line end.
std::uint64_t print_phases(std::FILE* f, const Phases& p) {
  return static_cast<std::uint64_t>(std::fprintf(
      f, "\"phases\":{\"forward_s\":%.6f,\"backward_s\":%.6f,\"comm_s\":%.6f,\"data_s\":%.6f}}\n",
      p.fwd, p.bwd, p.comm, p.data));
}

/// Native JSON Lines of about `target` bytes. `flops_shape`: the shape of the file the issue's
/// external generator wrote (182 MB for its benchmark): the step, its time, the model FLOPs of
/// the step (all GPUs) and the four timers; else tokens, loss, lr and grad_norm besides.
void native(std::FILE* f, std::uint64_t target, bool flops_shape) {
  std::uint64_t written =
      static_cast<std::uint64_t>(std::fprintf(f,
                                              "{\"type\":\"meta\",\"gpu\":\"h100-sxm\",\"gpus\":64,"
                                              "\"dtype\":\"bf16\",%s\"seq_len\":8192}\n",
                                              flops_shape ? "" : "\"model\":\"llama3-8b\","));
  Rng r;
  for (std::int64_t step = 1; written < target; ++step) {
    const Phases p = draw_phases(r);
    const auto s = static_cast<long long>(step);
    if (flops_shape) {
      const double flops = 2.5e16 * (1 + 0.001 * r.uniform());
      written += static_cast<std::uint64_t>(std::fprintf(
          f, "{\"step\":%lld,\"time_s\":%.6f,\"model_flops\":%.6e,", s, p.total(), flops));
    } else {
      const double loss = 2.0 + 8.0 / (1.0 + 0.001 * static_cast<double>(step));
      const double lr = 3e-4 * (0.5 + 0.5 * r.uniform());
      const double grad_norm = 0.2 + r.uniform();
      written += static_cast<std::uint64_t>(
          std::fprintf(f,
                       "{\"step\":%lld,\"time_s\":%.6f,\"tokens\":524288,\"loss\":%.5f,\"lr\":%.4e,"
                       "\"grad_norm\":%.4f,",
                       s, p.total(), loss, lr, grad_norm));
    }
    written += print_phases(f, p);
  }
}

/// "2024-MM-DD" for day `d` counted from 2024-01-01 (a leap year; wraps after a year).
std::string date(long long d) {
  static const int kDays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  d %= 366;
  int m = 0;
  while (d >= kDays[m]) d -= kDays[m++];
  char buf[16];
  std::snprintf(buf, sizeof buf, "2024-%02d-%02lld", m + 1, d + 1);
  return buf;
}

void megatron(std::FILE* f, std::uint64_t target) {
  std::uint64_t written = static_cast<std::uint64_t>(
      std::fprintf(f,
                   "------------------------ arguments ------------------------\n"
                   "  global_batch_size ............................... 512\n"
                   "  hidden_size ..................................... 4096\n"
                   "  micro_batch_size ................................ 1\n"
                   "  num_attention_heads ............................. 32\n"
                   "  num_layers ...................................... 32\n"
                   "  pipeline_model_parallel_size .................... 1\n"
                   "  seq_length ...................................... 4096\n"
                   "  tensor_model_parallel_size ...................... 8\n"
                   "  world_size ...................................... 64\n"
                   "-------------------- end of arguments ---------------------\n"));
  Rng r;
  const std::int64_t total = 100000000;
  double elapsed = 0;
  for (std::int64_t it = 1; written < target; ++it) {
    const double ms = 3300.0 + 50.0 * r.uniform();
    elapsed += ms / 1000.0;
    const auto clock = static_cast<long long>(elapsed);
    written += static_cast<std::uint64_t>(std::fprintf(
        f,
        " [%s %02lld:%02lld:%02lld] iteration %8lld/%9lld | consumed samples: %12lld | elapsed "
        "time per iteration "
        "(ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: %.6E | global batch "
        "size:   512 | lm "
        "loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations:   0 | "
        "number of nan "
        "iterations:   0 |\n",
        date(clock / 86400).c_str(), static_cast<long long>(clock / 3600 % 24),
        static_cast<long long>(clock / 60 % 60), static_cast<long long>(clock % 60),
        static_cast<long long>(it), static_cast<long long>(total), static_cast<long long>(it * 512),
        ms, 400.0 + 5.0 * r.uniform(), 1.5e-4 * r.uniform(), 2.0 + r.uniform(), 0.5 + r.uniform()));
  }
}

void kineto(std::FILE* f, std::uint64_t target, int rank) {
  std::uint64_t written = static_cast<std::uint64_t>(std::fprintf(
      f,
      "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 "
      "80GB HBM3\", "
      "\"totalGlobalMem\": 85045231616, \"computeMajor\": 9, \"computeMinor\": 0}],\n"
      "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": 2},\n"
      "  \"baseTimeNanoseconds\": 1700000000000000000,\n  \"traceEvents\": [\n",
      rank));
  Rng r;
  const char* kernels[] = {
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
      "segment_k_off_kernel__5x_cublas",
      "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
      "cutlass::bfloat16_t>, false, true, false, false, true, true, false>(Flash_fwd_params)",
      "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, "
      "c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, "
      "at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
      "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, "
      "3>)"};
  double ts = 1000.0;
  std::int64_t corr = 1;
  bool first = true;
  const int kernels_per_step = 2000;
  for (int step = 1; written < target; ++step) {
    const double step_start = ts;
    double dev = ts + 20.0;
    for (int k = 0; k < kernels_per_step && written < target; ++k, ++corr) {
      const bool nccl = k % 50 == 49;
      const double dur = nccl ? 300.0 + 50.0 * r.uniform() : 20.0 + 80.0 * r.uniform();
      const double launch = ts + 5.0 * k;
      written += static_cast<std::uint64_t>(std::fprintf(
          f,
          "%s    {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1234, "
          "\"tid\": 1234, \"ts\": "
          "%.3f, \"dur\": 3.2, \"args\": {\"External id\": %lld, \"Record function id\": 0, \"Ev "
          "Idx\": %lld}},\n"
          "    {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": "
          "1234, \"tid\": "
          "1234, \"ts\": %.3f, \"dur\": 2.5, \"args\": {\"External id\": %lld, \"cbid\": 211, "
          "\"correlation\": "
          "%lld}},\n",
          first ? "" : ",\n", launch, static_cast<long long>(corr), static_cast<long long>(corr),
          launch + 0.5, static_cast<long long>(corr), static_cast<long long>(corr)));
      first = false;
      dev = std::max(dev, launch + 4.0);
      if (nccl) {
        written += static_cast<std::uint64_t>(std::fprintf(
            f,
            "    {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
            "\"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)\", "
            "\"pid\": 0, \"tid\": 20, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": "
            "%lld, \"queued\": 0, "
            "\"device\": 0, \"context\": 1, \"stream\": 20, \"correlation\": %lld, \"registers per "
            "thread\": 96, "
            "\"shared memory\": 0, \"blocks per SM\": 0.5, \"warps per SM\": 2.0, \"grid\": [66, "
            "1, 1], \"block\": "
            "[256, 1, 1], \"est. achieved occupancy %%\": 3, \"Collective name\": \"allreduce\", "
            "\"In msg nelems\": "
            "16777216, \"Out msg nelems\": 16777216, \"dtype\": \"BFloat16\", \"Process Group "
            "Name\": \"0\", "
            "\"Process Group Ranks\": \"[0, 1]\"}}",
            dev, dur, static_cast<long long>(corr), static_cast<long long>(corr)));
      } else {
        written += static_cast<std::uint64_t>(std::fprintf(
            f,
            "    {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, "
            "\"ts\": %.3f, \"dur\": "
            "%.3f, \"args\": {\"External id\": %lld, \"queued\": 0, \"device\": 0, \"context\": 1, "
            "\"stream\": 7, "
            "\"correlation\": %lld, \"registers per thread\": 168, \"shared memory\": 98304, "
            "\"blocks per SM\": 1.0, "
            "\"warps per SM\": 12.0, \"grid\": [132, 1, 1], \"block\": [384, 1, 1], \"est. "
            "achieved occupancy %%\": "
            "19}}",
            kernels[k % 3], dev, dur, static_cast<long long>(corr), static_cast<long long>(corr)));
        dev += dur;
      }
    }
    ts = std::max(dev, ts + 5.0 * kernels_per_step) + 50.0;
    written += static_cast<std::uint64_t>(
        std::fprintf(f,
                     ",\n    {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                     "\"ProfilerStep#%d\", \"pid\": 1234, \"tid\": "
                     "1234, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": 0}}",
                     step, step_start, ts - step_start - 10.0));
  }
  std::fprintf(f, "\n  ],\n  \"traceName\": \"rank%d.pt.trace.json\"\n}\n", rank);
}

}  // namespace

bool generate(const std::string& kind, std::uint64_t bytes, const std::string& path, int rank) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  static char buf[1 << 20];
  std::setvbuf(f, buf, _IOFBF, sizeof buf);
  if (kind == "native" || kind == "native-flops")
    native(f, bytes, kind == "native-flops");
  else if (kind == "megatron")
    megatron(f, bytes);
  else if (kind == "kineto")
    kineto(f, bytes, rank);
  else {
    std::fclose(f);
    return false;
  }
  return std::fclose(f) == 0;
}

}  // namespace mfu_bench
