#pragma once
// Parallel parsing of one large plain file in pieces cut at record starts.
#include <cstdint>
#include <optional>
#include <string>

#include "ingest/parser.hpp"

namespace mfu::detail {

/// Parses `path` (`size` bytes, uncompressed) in `pieces` ranges on as many threads and merges
/// them in order, finalized. nullopt when the format cannot be cut, --strict is on (its error
/// must name the first bad line), or no record starts near a cut.
[[nodiscard]] std::optional<Run> parse_chunked(const std::string& path, std::uint64_t size,
                                               const FormatSpec& spec, const IngestOptions& options,
                                               unsigned pieces);

}  // namespace mfu::detail
