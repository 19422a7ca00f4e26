#pragma once
// Profiler traces as a normalized Run: one record per profiler step (the slowest rank's), with
// the device-level split as measured phases, so traces and logs share the analysis and reports.

#include <memory>

#include "ingest/parser.hpp"
#include "mfu/trace.hpp"

namespace mfu::detail {

/// Fills `run` (iterations, metadata, timestamps) from `summary` and attaches it.
void fill_run_from_trace(Run& run, std::shared_ptr<const TraceSummary> summary);

}  // namespace mfu::detail
