#pragma once
/// PyTorch profiler (Kineto) Chrome-trace analysis: what every GPU did, per step and per rank.
/// Device time is taken from the union of kernel intervals across streams (never the sum of
/// kernel durations), with compute taking priority over communication over memory copies, as
/// Holistic Trace Analysis does; timestamps are kept exact to the nanosecond.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mfu {

enum class KernelKind : std::uint8_t { kCompute, kComm, kMemory, kSync };

/// Name patterns (case-insensitive substrings; a leading '^' anchors at the start) that class
/// GPU kernels. Users extend the communication list with --comm-kernel.
struct KernelPatterns {
  std::vector<std::string> comm;
  std::vector<std::string> memory;
  std::vector<std::string> sync;
  /// nccl/rccl/hccl families (ncclKernel_*, ncclDevKernel_*), c10d, symmetric-memory and
  /// expert-parallel dispatch kernels; Memcpy/Memset/dma; *Sync*, Stream Wait Event.
  [[nodiscard]] static KernelPatterns defaults();
  [[nodiscard]] KernelKind classify(std::string_view name, std::string_view category) const;
};

/// One profiler step of one rank, in seconds.
struct TraceStep {
  std::int64_t step = 0;
  double end_s = 0;              ///< absolute end (Unix seconds, or trace clock when no base time)
  double wall_s = 0;             ///< from the step's first kernel to the next step's first kernel
  double compute_s = 0;          ///< union of compute kernels
  double comm_s = 0;             ///< union of communication kernels
  double comm_exposed_s = 0;     ///< communication while no compute ran
  double memory_exposed_s = 0;   ///< copies and sets while neither compute nor communication ran
  double idle_s = 0;             ///< no kernel at all
  double idle_host_s = 0;        ///< idle because the CPU had not launched the next kernel yet
  double idle_data_s = 0;        ///< host-bound idle while the CPU was in the data loader
  double wait_s = 0;             ///< exposed communication spent waiting for slower ranks
  std::size_t arrived_last = 0;  ///< collectives of this step this rank started last
  double flops = 0;  ///< executed FLOPs the profiler counted (with_flops=True), this rank
};

/// A collective kernel, for matching across ranks.
struct CollectiveCall {
  std::string key;            ///< process group + collective + sequence (or occurrence index)
  std::int64_t start_ns = 0;  ///< absolute
  std::int64_t dur_ns = 0;
  double bytes = 0;
  std::int64_t step = -1;
  double exposed_fraction = 1;  ///< share of its time not hidden under compute
};

struct TraceRankSummary {
  std::string file;
  int rank = -1;
  std::string rank_source;  ///< "distributedInfo", "file name" or "" (unknown)
  int world_size = -1;
  std::string device_name;
  int device = -1;
  std::size_t kernels = 0, comm_kernels = 0, memory_events = 0, sync_events = 0;
  std::size_t launches = 0;  ///< runtime launch events joined by correlation
  double window_s = 0, compute_s = 0, comm_s = 0, comm_exposed_s = 0, memory_exposed_s = 0,
         idle_s = 0, idle_host_s = 0, idle_data_s = 0;
  double wait_s = 0;             ///< collective time waiting for slower ranks (cross-rank matching)
  double transfer_s = 0;         ///< collective time at the pace of the fastest rank
  std::size_t arrived_last = 0;  ///< collectives this rank started last
  double overlap_ratio = 0;      ///< communication hidden under compute / all communication
  double flops = 0;              ///< executed FLOPs counted by the profiler
  bool has_flops = false;
  bool truncated = false;
  /// No device events at all (a CPU-only run, or PyTorch without Kineto's CUDA activity): the
  /// steps are the CPU's ProfilerStep spans and only their data-loader time is known.
  bool cpu_only = false;
  std::vector<TraceStep> steps;
  std::vector<CollectiveCall> collectives;
  std::vector<std::string> warnings;
};

struct TraceSummary {
  std::vector<TraceRankSummary> ranks;
  std::vector<int> stragglers;  ///< ranks the others wait for
  std::string straggler_reason;
  std::size_t matched_collectives = 0;
  std::size_t unmatched_collectives = 0;
  std::vector<std::string> warnings;
};

/// The step time if no rank were late: every matched collective starts when the median rank
/// arrived at it instead of the last (the what-if of Lin et al., "Understanding Stragglers in
/// Large Model Training Using What-if Analysis", OSDI 2025, which simulates the straggler-free
/// run from traces). After a collective the ranks leave together, so the savings of the
/// collectives of one step add up.
struct StragglerStep {
  std::int64_t step = 0;
  double now_s = 0;        ///< the slowest rank's step
  double projected_s = 0;  ///< less what the late arrivals cost
};
struct StragglerCost {
  int rank = -1;
  double seconds = 0;           ///< over all traced steps: the last arrival's lead over the median
  std::size_t collectives = 0;  ///< the collectives it arrived at last (and late)
};
struct StragglerProjection {
  std::vector<StragglerStep> steps;
  double now_s = 0;        ///< mean traced step
  double projected_s = 0;  ///< mean straggler-free step
  std::size_t matched_collectives = 0;
  std::vector<StragglerCost> costs;  ///< the ranks that made the others wait, costliest first
};

/// Throws mfu::Error when the summary has fewer than two ranks or no collective seen on two.
[[nodiscard]] StragglerProjection project_no_stragglers(const TraceSummary& trace);

}  // namespace mfu
