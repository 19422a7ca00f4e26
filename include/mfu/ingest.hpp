#pragma once
/// Reading training logs: format detection, decompression, one parser per format, and the
/// conversion to mfu's native JSON Lines.
///
/// **Example**:
///   mfu::IngestOptions opt;
///   mfu::Run run = mfu::ingest({"run.log.gz"}, opt);   // detects the format
///   run.iterations.size();                              // per-iteration records

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/run.hpp"

namespace mfu {

struct IngestOptions {
  std::string format;   ///< force a format ("" = detect)
  bool strict = false;  ///< a malformed record line is an error, not a warning
  std::size_t max_diagnostics = 20;
  unsigned threads = 0;  ///< 0 = hardware concurrency (at most 8)
  /// A plain file at least this large is parsed in pieces on `threads` threads when its
  /// format allows (native JSON Lines, Megatron).
  std::uint64_t parallel_min_bytes = std::uint64_t{32} << 20;
  /// Extra name patterns (case-insensitive substrings) of communication kernels in traces.
  std::vector<std::string> comm_kernel_patterns;
  /// Merge inputs whose metadata says they are different jobs (model shape, GPU count, GPU,
  /// format) instead of refusing them.
  bool force_merge = false;
  /// A regular expression with named groups for step lines (format "pattern"): (?<step>...)
  /// and any of time_s, time_ms, elapsed_s, tokens, tokens_per_s, samples, samples_per_s,
  /// tflops_per_gpu, mfu (percent), loss.
  std::string pattern;
  /// Keep each record's loss. Only reports that list the records show it (per-iteration JSON,
  /// CSV, conversion); the analysis never reads it. Without it the record store is 4 bytes a
  /// record smaller: 22 MB of a 1 GiB native log's peak, memory the parse would fault in.
  bool keep_loss = true;
  /// Called with progress messages ("reading x.log (megatron)") when set.
  std::function<void(const std::string&)> on_progress;
};

/// Bytes this process has read from files and stdin so far, by every thread, before
/// decompression: what a progress display polls while ingest() runs.
[[nodiscard]] std::uint64_t bytes_read_so_far();

/// Names and one-line descriptions of the formats mfu reads.
struct FormatInfo {
  std::string name;
  std::string description;
};
[[nodiscard]] const std::vector<FormatInfo>& known_formats();

/// Result of sniffing the start of an input.
struct FormatGuess {
  std::string name;       ///< best format, empty when none fits
  double score = 0;       ///< evidence for it
  std::string runner_up;  ///< nearest other format (for error messages)
  double runner_up_score = 0;
};

/// Sniffs `head` (the first bytes of the input). `filename` helps only with tie-breaks
/// (".csv", "trainer_state.json").
[[nodiscard]] FormatGuess detect_format(std::string_view head, std::string_view filename = {});

/// Reads one or more inputs into one run. Each path is a file (plain, .gz or .zst, detected by
/// content), "-" for stdin, or a directory (its files, ordered by content). Several files of
/// the same run are merged: one per rank (overlapping steps) or the pieces of a restarted job
/// (ordered by their steps and timestamps). Throws mfu::Error when nothing can be read or the
/// format is unknown (naming the formats tried and the nearest one).
[[nodiscard]] Run ingest(const std::vector<std::string>& paths, const IngestOptions& options = {});

/// Parses text already in memory (tests, fuzzing). `name` labels diagnostics.
[[nodiscard]] Run ingest_text(std::string_view text, const std::string& name,
                              const IngestOptions& options = {});

/// Follows one log file that is still being written (mfu analyze --follow): each poll() reads
/// only the bytes appended since the last one, through the same parser, so a long log is read
/// once. A line is parsed when its newline arrives. A file that shrinks (rotated, rewritten) is
/// read again from its start. Compressed files and whole-document formats (profiler traces,
/// trainer_state.json) are re-read at each poll instead.
class LogFollower {
 public:
  LogFollower(std::string path, IngestOptions options = {});
  ~LogFollower();
  LogFollower(const LogFollower&) = delete;
  LogFollower& operator=(const LogFollower&) = delete;
  /// Reads what was appended. Returns true when something new was read. Throws mfu::Error when
  /// the file cannot be read or its format is unknown once its first MiB is there.
  bool poll();
  /// The run so far, finalized (a copy: the follower keeps reading). Throws mfu::Error when no
  /// format has been recognised yet.
  [[nodiscard]] Run snapshot() const;
  /// Bytes consumed so far.
  [[nodiscard]] std::uint64_t offset() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Writes `run` as native JSON Lines: one meta line, one line per record, one line per event.
void write_native(const Run& run, std::ostream& out);

}  // namespace mfu
