// LogFollower: incremental reading of a log that is still being written. The parser and its
// RunBuilder live across polls; only complete new lines are fed to them.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ingest/line_feed.hpp"
#include "ingest/parser.hpp"
#include "io/line_reader.hpp"
#include "io/source.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "mfu/inputs.hpp"

namespace mfu {

namespace {
constexpr std::size_t kHead = std::size_t{1} << 20;  // as much as detection reads
}  // namespace

struct LogFollower::State {
  std::string path;
  IngestOptions options;
  std::uint64_t offset = 0;  // bytes of complete lines consumed
  std::uint64_t line = 0;    // lines consumed
  std::string pending;       // bytes after the last newline
  const detail::FormatSpec* spec = nullptr;
  bool whole_file = false;  // compressed or a document format: re-read at each poll
  Run run;
  std::unique_ptr<detail::RunBuilder> builder;
  std::unique_ptr<detail::LineParser> parser;
  std::unique_ptr<detail::LineFeed> line_feed;
  std::uint64_t skipped_long = 0;

  void reset() {
    offset = 0;
    line = 0;
    pending.clear();
    spec = nullptr;
    run = Run{};
    line_feed.reset();
    parser.reset();
    builder.reset();
    skipped_long = 0;
  }

  void start_parser() {
    run = Run{};
    run.format = spec->name;
    run.inputs.push_back(path);
    builder = std::make_unique<detail::RunBuilder>(run, options, path, 0);
    parser = spec->make_line_parser(*builder);
    line_feed = std::make_unique<detail::LineFeed>(*spec, *parser, *builder);
  }

  /// Feeds the complete lines of `bytes` (which ends with a newline) to the parser, split as
  /// the streaming reader splits them (\r segments, line numbers continuing from the last poll).
  void feed(std::string_view bytes) {
    const auto source = detail::memory_source(bytes);
    detail::LineReader reader(*source);
    reader.set_next_line(line + 1);
    line_feed->all(reader);
    line = reader.line_number();
    skipped_long += reader.oversized_lines();
    run.lines_read = line;
    run.bytes_read = offset;
  }
};

LogFollower::LogFollower(std::string path, IngestOptions options)
    : state_(std::make_unique<State>()) {
  state_->path = std::move(path);
  state_->options = std::move(options);
  if (detail::plain_file_size(state_->path) == 0 && std::filesystem::exists(state_->path) &&
      std::filesystem::file_size(state_->path) > 0)
    state_->whole_file = true;  // compressed: cannot be read incrementally
}

LogFollower::~LogFollower() = default;

std::uint64_t LogFollower::offset() const {
  return state_->offset;
}

bool LogFollower::poll() {
  State& s = *state_;
  if (s.whole_file) return true;
  const int fd = ::open(s.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(fmt::format("cannot open '{}': {}", s.path, std::strerror(errno)),
                "check the path");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(fmt::format("'{}' is not a regular file", s.path),
                fmt::format("{} watches one log file", input_phrase(Input::kFollow)));
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < s.offset + s.pending.size()) s.reset();  // rotated or rewritten: start again
  std::uint64_t pos = s.offset + s.pending.size();
  bool any = false;
  std::string buf(std::size_t{1} << 20, '\0');
  while (pos < size) {
    const ssize_t got = ::pread(fd, buf.data(), std::min<std::uint64_t>(buf.size(), size - pos),
                                static_cast<off_t>(pos));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    pos += static_cast<std::uint64_t>(got);
    s.pending.append(buf.data(), static_cast<std::size_t>(got));
    any = true;
    if (!s.spec) {
      // Detect the format once the first MiB (or a few complete lines at the end) is there.
      if (s.pending.size() < kHead && pos < size) continue;
      const FormatGuess g = detect_format(s.pending.substr(0, kHead),
                                          std::filesystem::path(s.path).filename().string());
      if (g.name.empty()) {
        if (s.pending.size() < kHead) break;  // maybe later lines will say
        ::close(fd);
        throw Error(fmt::format("cannot tell the format of '{}' from its first MiB", s.path),
                    fmt::format("force one with {}", input_phrase(Input::kFormat)));
      }
      s.spec = detail::find_format(g.name);
      if (!s.spec->make_line_parser) {
        s.whole_file = true;
        break;
      }
      s.start_parser();
    }
    // Parse every complete line; keep the partial tail for the next poll.
    const std::size_t last_nl = s.pending.rfind('\n');
    if (last_nl != std::string::npos) {
      s.offset += last_nl + 1;
      s.feed(std::string_view(s.pending.data(), last_nl + 1));
      s.pending.erase(0, last_nl + 1);
    } else if (s.pending.size() > detail::kMaxLineBytes) {
      // A line longer than the limit: drop it, as the streaming reader does.
      s.offset += s.pending.size();
      s.pending.clear();
      ++s.skipped_long;
    }
  }
  ::close(fd);
  return any;
}

Run LogFollower::snapshot() const {
  const State& s = *state_;
  if (s.whole_file) return ingest({s.path}, s.options);
  if (!s.spec)
    throw Error(fmt::format("'{}' has no line mfu recognises yet", s.path),
                "wait for the first iterations");
  Run copy = s.run;
  if (s.skipped_long > 0)
    copy.diagnostics.push_back(
        Diagnostic{Diagnostic::Severity::kWarning, s.path, 0,
                   fmt::format("skipped {} line(s) longer than 16 MiB", s.skipped_long)});
  if (!s.pending.empty()) {
    copy.diagnostics.push_back(
        Diagnostic{Diagnostic::Severity::kInfo, s.path, s.line + 1,
                   "the last line is still being written; it is read when it ends"});
  }
  detail::finalize_run(copy, s.spec->timing, s.spec->single_iteration_records);
  detail::make_printable(copy);
  return copy;
}

}  // namespace mfu
