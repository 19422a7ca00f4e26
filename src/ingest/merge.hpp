#pragma once
// Several parsed inputs to one run: metadata files fill in what the logs lack; profiler traces
// of ranks are combined by their collectives; a log and a trace of the same job stay apart
// (the trace is kept beside the log, never merged as a rank); logs are grouped into the
// pieces of the job (inputs whose clocks overlap run at the same time: they are ranks) and
// their records go to the per-rank streams of finalize_run, so that restarts, ranks and
// pieces are told apart there. Inputs whose metadata says they are different jobs are refused.

#include <vector>

#include "mfu/ingest.hpp"
#include "mfu/run.hpp"

namespace mfu::detail {

/// Merges the parsed inputs (each already finalized). Throws mfu::Error when the inputs do not
/// belong together and `options.force_merge` is off.
[[nodiscard]] Run merge_inputs(std::vector<Run> runs, const IngestOptions& options);

/// Groups logs into pieces (indices into `logs`, each piece's logs being ranks of one
/// incarnation), pieces in time order. Logs whose clocks overlap are one piece. Without clocks
/// on every log: logs whose rank tags are disjoint are ranks, logs tagged with the same ranks
/// are consecutive pieces, and untagged logs are ranks when their steps overlap.
[[nodiscard]] std::vector<std::vector<std::size_t>> group_into_pieces(const std::vector<Run>& logs);

}  // namespace mfu::detail
