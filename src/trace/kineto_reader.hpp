#pragma once
// Streams one Kineto trace file: a structural scanner walks the top-level object and the
// traceEvents array without building a document; each event's few needed fields are read
// from its text (timestamps exactly, as decimal microseconds to integer nanoseconds), and
// simdjson parses the events whose nested arguments matter (collectives, FLOP counts) and
// the metadata objects (deviceProperties, distributedInfo), wherever they are in the file.

#include <cstdint>
#include <string>
#include <vector>

#include "io/source.hpp"
#include "mfu/trace.hpp"

namespace mfu::detail {

/// A GPU activity on one device, in nanoseconds on the trace clock.
struct GpuEvent {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t correlation = -1;
  std::int32_t stream = 0;
  std::int32_t collective = -1;  ///< index into collectives for communication kernels
  KernelKind kind = KernelKind::kCompute;
};

struct CpuSpan {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t step = -1;  ///< for profiler steps
};

struct FlopCount {
  std::int64_t ts = 0;
  double flops = 0;
};

/// Everything kept from one trace file (tens of bytes per GPU event).
struct RawTrace {
  std::string file;
  int rank = -1;
  std::string rank_source;
  int world_size = -1;
  std::int64_t base_ns = 0;  ///< baseTimeNanoseconds (0 when absent: timestamps are absolute)
  std::vector<std::string> device_names;  ///< by device id
  std::vector<GpuEvent> gpu;              ///< of the busiest device
  int device = -1;
  std::vector<std::pair<std::int64_t, std::int64_t>>
      launches;                     ///< (correlation, launch ts), sorted
  std::vector<CpuSpan> steps;       ///< ProfilerStep#N (CPU)
  std::vector<CpuSpan> data_spans;  ///< data-loader CPU ops
  std::vector<FlopCount> flops;
  std::vector<CollectiveCall> collectives;
  std::size_t memory_events = 0, sync_events = 0, kernels = 0;
  bool truncated = false;
  std::vector<std::string> warnings;
};

/// Reads one trace. `name` labels messages. Throws mfu::Error when the input is not a trace.
[[nodiscard]] RawTrace read_kineto(ByteSource& source, const std::string& name,
                                   const KernelPatterns& patterns);

}  // namespace mfu::detail
