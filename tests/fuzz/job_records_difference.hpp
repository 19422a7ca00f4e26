#pragma once
// Two combinings of rank streams (combine_rank_streams on a fast path and on the reference
// path) compared bit for bit: every field of every record, the incarnations, the counts and
// every rank's summary. Shared by the rank_streams fuzz target and the unit tests.
#include <string>

#include "ingest/rank_streams.hpp"

namespace mfu::fuzz {

/// What differs first, in words ("record 12: time_s", "incarnations", ...); "" when nothing.
[[nodiscard]] std::string job_records_difference(const detail::JobRecords& a,
                                                 const detail::JobRecords& b);

}  // namespace mfu::fuzz
