#include <algorithm>

#include "mfu/trace.hpp"
#include "text.hpp"

namespace mfu {

KernelPatterns KernelPatterns::defaults() {
  KernelPatterns p;
  // Communication: NCCL/RCCL/HCCL families including the ncclDevKernel_* names NCCL 2.19+ uses
  // (HTA issue #360 missed them), c10d, Triton symmetric-memory collectives, expert-parallel
  // dispatch/combine (DeepEP, NVSHMEM) and custom all-reduce kernels.
  p.comm = {"^nccl",      "ncclkernel",     "nccldevkernel",
            "^rccl",      "^hccl",          "c10d::",
            "all_reduce", "allreduce",      "all_gather",
            "allgather",  "reduce_scatter", "reducescatter",
            "alltoall",   "all_to_all",     "nvshmem",
            "deep_ep",    "deepep",         "cross_device_reduce",
            "multimem"};
  p.memory = {"^memcpy", "^memset", "^hipmemcpy", "^hipmemset", "^dma"};
  p.sync = {"stream wait event", "^sync", "^event sync", "^device sync", "^context sync"};
  return p;
}

namespace {

bool matches(std::string_view lower_name, const std::string& pattern) {
  if (!pattern.empty() && pattern.front() == '^')
    return detail::starts_with(lower_name, std::string_view(pattern).substr(1));
  return lower_name.find(pattern) != std::string_view::npos;
}

}  // namespace

KernelKind KernelPatterns::classify(std::string_view name, std::string_view category) const {
  if (category == "gpu_memcpy" || category == "gpu_memset" || category == "Memcpy" ||
      category == "Memset")
    return KernelKind::kMemory;
  if (category == "cuda_sync") return KernelKind::kSync;
  // Lower-case a bounded prefix: kernel names can be kilobytes of template arguments.
  char buf[256];
  const std::size_t n = std::min(name.size(), sizeof(buf));
  for (std::size_t i = 0; i < n; ++i) buf[i] = detail::lower(name[i]);
  const std::string_view lower(buf, n);
  for (const auto& c : comm)
    if (matches(lower, c)) return KernelKind::kComm;
  for (const auto& m : memory)
    if (matches(lower, m)) return KernelKind::kMemory;
  for (const auto& s : sync)
    if (matches(lower, s)) return KernelKind::kSync;
  return KernelKind::kCompute;
}

}  // namespace mfu
