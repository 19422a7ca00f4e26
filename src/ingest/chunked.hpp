#pragma once
// Parallel parsing of one large plain file in pieces cut at record starts.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ingest/parser.hpp"

namespace mfu::detail {

/// How many pieces a file of `size` bytes is cut into for `threads` threads: several per
/// thread, taken in turn, none smaller than `min_piece_bytes` unless there would be fewer pieces
/// than threads.
[[nodiscard]] unsigned piece_count(std::uint64_t size, unsigned threads,
                                   std::uint64_t min_piece_bytes);

/// Where each of `pieces` pieces of a `size`-byte file starts before the cut moves to a record
/// start: the pieces shrink round by round (a round is one piece per thread), each round's a
/// third of the one before. A thread that finishes first takes the next piece, so the threads
/// end apart by at most about one piece of the last round: with equal pieces of a 1 GiB native
/// log, one thread parsed alone for the last 0.3 s of 1.2 s (perf timeline, 2 vCPUs that ran
/// at different speeds); with shrinking ones, for 0.04-0.1 s.
[[nodiscard]] std::vector<std::uint64_t> planned_piece_starts(std::uint64_t size, unsigned pieces,
                                                              unsigned threads);

/// Parses `path` (`size` bytes, uncompressed) in up to `pieces` ranges on `threads` threads and
/// merges them in order, finalized. nullopt when the format cannot be cut, --strict is on (its
/// error must name the first bad line), or no record starts near a cut.
[[nodiscard]] std::optional<Run> parse_chunked(const std::string& path, std::uint64_t size,
                                               const FormatSpec& spec, const IngestOptions& options,
                                               unsigned threads, unsigned pieces);

}  // namespace mfu::detail
