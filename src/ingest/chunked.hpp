#pragma once
// Parallel parsing of one large plain file in pieces cut at record starts.
#include <cstdint>
#include <optional>
#include <string>

#include "ingest/parser.hpp"

namespace mfu::detail {

/// How many pieces a file of `size` bytes is cut into for `threads` threads: several per
/// thread, taken in turn, none smaller than `min_piece_bytes` unless there would be fewer pieces
/// than threads.
[[nodiscard]] unsigned piece_count(std::uint64_t size, unsigned threads,
                                   std::uint64_t min_piece_bytes);

/// Parses `path` (`size` bytes, uncompressed) in up to `pieces` ranges on `threads` threads and
/// merges them in order, finalized. nullopt when the format cannot be cut, --strict is on (its
/// error must name the first bad line), or no record starts near a cut.
[[nodiscard]] std::optional<Run> parse_chunked(const std::string& path, std::uint64_t size,
                                               const FormatSpec& spec, const IngestOptions& options,
                                               unsigned threads, unsigned pieces);

}  // namespace mfu::detail
