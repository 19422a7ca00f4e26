#pragma once
// Device-level accounting of one rank: unions of kernel intervals per class, per profiler step.

#include "mfu/trace.hpp"
#include "trace/kineto_reader.hpp"

namespace mfu::detail {

/// Splits the rank's device time per step into compute, exposed communication, exposed memory
/// and idle (host-bound, data loader, other), and marks each collective's exposed share.
[[nodiscard]] TraceRankSummary summarize_trace(RawTrace& raw);

/// Cross-rank: matches collectives, splits their time into transfer and waiting for the slowest
/// rank, names stragglers.
[[nodiscard]] TraceSummary combine_ranks(std::vector<TraceRankSummary> ranks);

}  // namespace mfu::detail
