// Parallel parsing of one large plain file: the file is cut into byte ranges at lines where a
// record starts (FormatSpec::record_start), each range is parsed by its own parser on its own
// thread, and the pieces are merged in file order. Line numbers are exact: a piece is numbered
// from a fixed line while it is parsed, and moved by the lines of the pieces before it after.
#include "ingest/chunked.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "ingest/line_feed.hpp"
#include "io/line_reader.hpp"
#include "io/source.hpp"
#include "mfu/error.hpp"
#include "text.hpp"
#include "work_queue.hpp"

namespace mfu::detail {
namespace {

constexpr std::size_t kScan = std::size_t{1} << 20;  // how far to look for a record start
/// Where to look first: a record start is usually a line or two from a cut, and a file cut in
/// many pieces (kPiecesPerThread) read 2 MiB around each cut before any parsing began.
constexpr std::size_t kFirstScan = std::size_t{64} << 10;
constexpr std::size_t kScanWindows[] = {kFirstScan, kScan};

/// Pieces per thread: the threads take the pieces in turn as each finishes one, so that a
/// thread that runs slower (a virtual CPU the host lends elsewhere, page-cache pages the host
/// must bring back) parses fewer bytes instead of keeping the others waiting at the end. With
/// pieces of equal size, the threads still finished up to a piece apart (0.3 s of 1.2 s on a
/// 1 GiB native log, perf timeline, 2-vCPU VM), hence pieces that shrink (kShrinkPerRound).
/// Each piece's columns end in a partly filled 2 MiB chunk (8 equal pieces per thread: peak RSS
/// 233 -> 292 MB; IterationTable::shrink_to_fit gives back only the mostly empty ones). Three
/// shrinking pieces a thread against two, 11 alternating rounds (tests/bench/alternate.sh):
/// native 1 GiB 1.56 -> 1.49 s, Megatron 1.01 -> 0.94 s, the same peak RSS.
constexpr unsigned kPiecesPerThread = 3;
/// How much smaller each round of pieces is than the one before (planned_piece_starts). A
/// judgement, not tuned: on two threads the last pieces are then 1/26 of the file each (about
/// 80 ms of parsing on a 1 GiB log); a shrink of 2 (last pieces 1/14) was no faster in 9
/// alternating rounds, and more rounds would add pieces, each with a partly filled chunk.
constexpr std::uint64_t kShrinkPerRound = 3;

struct Fd {
  int fd = -1;
  explicit Fd(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  std::string read_at(std::uint64_t pos, std::size_t n) const {
    std::string buf(n, '\0');
    std::size_t have = 0;
    while (have < n) {
      const ssize_t got = ::pread(fd, buf.data() + have, n - have, static_cast<off_t>(pos + have));
      if (got <= 0) break;
      have += static_cast<std::size_t>(got);
    }
    buf.resize(have);
    return buf;
  }
};

/// The first line start at or after `pos` where a record starts, or 0 when none is near.
std::uint64_t cut_after(const Fd& f, std::uint64_t pos, std::uint64_t size,
                        const FormatSpec& spec) {
  // A larger window starts with the smaller one: the first record start found is the same.
  for (const std::size_t window : kScanWindows) {
    const std::string buf =
        f.read_at(pos, static_cast<std::size_t>(std::min<std::uint64_t>(window, size - pos)));
    std::size_t nl = buf.find('\n');
    while (nl != std::string::npos && nl + 1 < buf.size()) {
      const std::size_t start = nl + 1;
      const std::size_t end = buf.find('\n', start);
      if (end == std::string::npos) break;  // the line runs past the window
      std::string_view line(buf.data() + start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (spec.record_start(record_body(spec, line))) return pos + start;
      nl = end;
    }
    if (window >= size - pos) break;  // the whole rest was read
  }
  return 0;
}

/// The last record-start line that ends before `cut` (to rebuild the parser's state), or "".
std::string record_before(const Fd& f, std::uint64_t cut, const FormatSpec& spec) {
  // A larger window ends with the smaller one: the last record start found is the same.
  for (const std::size_t window : kScanWindows) {
    const std::uint64_t from = cut > window ? cut - window : 0;
    const std::string buf = f.read_at(from, static_cast<std::size_t>(cut - from));
    std::size_t end = buf.size();
    if (end > 0 && buf[end - 1] == '\n') --end;
    while (end > 0) {
      const std::size_t nl = buf.rfind('\n', end - 1);
      const std::size_t start = nl == std::string::npos ? 0 : nl + 1;
      if (nl == std::string::npos && from > 0) break;  // the line may start before the window
      std::string_view line(buf.data() + start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (spec.record_start(record_body(spec, line))) return std::string(line);
      if (nl == std::string::npos) break;
      end = nl;
    }
    if (from == 0) break;  // the whole file before the cut was read
  }
  return {};
}

/// A piece after the first is numbered as if its first line were line 2 (its priming record
/// line 1, 0 staying "no line"): the lines above it are known only once the pieces before it
/// are parsed, and counting them first was a pass over half the file on one core before any
/// parsing began (100 ms of 2.6 s on a 1 GiB log).
constexpr std::uint64_t kRelativeFirstLine = 2;

/// The line number N written at text[from] ("label:N", RunBuilder::where()): its value, and
/// in `to` where its digits end (== from when there are none; at most 18 digits are read).
std::uint64_t line_number_at(std::string_view text, std::size_t from, std::size_t& to) {
  std::uint64_t n = 0;
  for (to = from; to < text.size() && text[to] >= '0' && text[to] <= '9' && to - from < 18; ++to)
    n = n * 10 + static_cast<std::uint64_t>(text[to] - '0');
  return n;
}

/// Adds `shift` to each line number written "label:N" in `text` (metadata sources and the
/// messages that quote them).
void shift_line_refs(std::string& text, std::string_view label, std::uint64_t shift) {
  const std::string mark = std::string(label) + ":";
  for (std::size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at)) {
    const std::size_t from = at + mark.size();
    std::size_t to = from;
    const std::uint64_t n = line_number_at(text, from, to);
    if (to == from) {
      at = from;
      continue;
    }
    const std::string moved = std::to_string(n + shift);
    text.replace(from, to - from, moved);
    at = from + moved.size();
  }
}

/// N of a source that is exactly "label:N", else 0: the line a conflicting value was read on,
/// where the streaming reader warns.
std::uint64_t line_of_source(std::string_view source, std::string_view label) {
  if (source.size() <= label.size() + 1 || source.substr(0, label.size()) != label ||
      source[label.size()] != ':')
    return 0;
  std::size_t to = 0;
  const std::uint64_t n = line_number_at(source, label.size() + 1, to);
  return to == source.size() ? n : 0;
}

/// Moves everything a piece numbered from kRelativeFirstLine says about lines by `shift`.
void shift_piece_lines(Run& run, std::string_view label, std::uint64_t shift) {
  if (shift == 0) return;
  run.iterations.shift_lines(static_cast<std::uint32_t>(shift));
  for (Event& e : run.events)
    if (e.line != 0) e.line += static_cast<std::uint32_t>(shift);
  for (Diagnostic& d : run.diagnostics) {
    if (d.line != 0) d.line += shift;
    shift_line_refs(d.message, label, shift);
  }
  // A text value's source is stored printable: a path with control characters is quoted so.
  const std::string stored_label = needs_printable(label) ? printable(label) : std::string(label);
  RunMeta moved;
  for (const auto& entry : run.meta.all()) {  // (no structured binding: a lambda uses it)
    const std::string& key = entry.first;
    const MetaValue& v = entry.second;
    std::string source = v.source;
    shift_line_refs(source, label, shift);
    if (stored_label != label) shift_line_refs(source, stored_label, shift);
    std::visit([&](const auto& value) { moved.set(key, value, source, v.last_wins); }, v.value);
  }
  run.meta = std::move(moved);
}

struct Piece {
  std::uint64_t begin = 0, end = 0, first_line = 1;
  std::string priming;  // the record line before the cut, replayed and then dropped
  Run run;
  std::uint64_t oversized = 0, first_oversized = 0;
  bool unterminated = false;
};

void parse_piece(Piece& p, const std::string& path, const FormatSpec& spec,
                 const IngestOptions& opt) {
  // A record takes about 190 bytes of a native log and 350 of a Megatron one (the files of
  // tests/bench/compare.sh). A column's reserved room is filled when it is made, so 256 bytes a
  // record: a native piece grows once more, a Megatron one fills a little more than it uses
  // (128 took 64 MiB Megatron logs from 5,600 to 6,400 page faults).
  p.run.iterations.reserve((p.end - p.begin) / 256);
  RunBuilder b(p.run, opt, path, 0);
  auto parser = spec.make_line_parser(b);
  LineFeed feed(spec, *parser, b);
  if (!p.priming.empty()) {
    // Replay the previous record so that state carried from it (previous step, counters)
    // is right for the first record here, then drop what the replay produced.
    const std::size_t its = p.run.iterations.size(), evs = p.run.events.size(),
                      ds = p.run.diagnostics.size();
    const std::uint64_t bad = p.run.malformed_lines, supp = p.run.suppressed_diagnostics;
    std::string padded = p.priming;
    padded.append(kLinePadding, '\0');
    feed.line(std::string_view(padded.data(), p.priming.size()), kRelativeFirstLine - 1);
    while (p.run.iterations.size() > its) p.run.iterations.pop_back();
    p.run.events.resize(evs);
    p.run.diagnostics.resize(ds);
    p.run.malformed_lines = bad;
    p.run.suppressed_diagnostics = supp;
  }
  auto src = open_file_range(path, p.begin, p.end);
  LineReader reader(*src);
  reader.set_next_line(p.first_line);
  feed.all(reader);
  parser->finish();
  b.finish();
  // The piece is done: its columns' mostly empty last chunks are given back but for what they
  // hold.
  p.run.iterations.shrink_to_fit();
  p.run.lines_read = reader.line_number() - (p.first_line - 1);
  p.run.bytes_read = reader.bytes_read();
  p.oversized = reader.oversized_lines();
  p.first_oversized = reader.first_oversized_line();
  p.unterminated = reader.unterminated_last_line();
}

/// Byte offsets where pieces start: 0, then a record start after each of the other planned
/// starts (two that reach the same record start make one cut). Empty when some planned start
/// has no record start near it.
std::vector<std::uint64_t> cut_points(const Fd& f, std::uint64_t size, const FormatSpec& spec,
                                      unsigned wanted, unsigned threads) {
  const std::vector<std::uint64_t> planned = planned_piece_starts(size, wanted, threads);
  std::vector<std::uint64_t> cuts{0};
  for (unsigned k = 1; k < wanted; ++k) {
    const std::uint64_t c = cut_after(f, planned[k], size, spec);
    if (c == 0) return {};  // no record start near: parse in one piece
    if (c > cuts.back()) cuts.push_back(c);
  }
  return cuts;
}

/// Parses every piece on `threads` threads taking them in turn; after a piece fails no other is
/// started, and the first failed piece in file order is the error.
void parse_pieces(std::vector<Piece>& ps, unsigned threads, const std::string& path,
                  const FormatSpec& spec, const IngestOptions& opt) {
  run_in_turn(
      ps.size(), threads, [&](std::size_t k) { parse_piece(ps[k], path, spec, opt); }, true);
}

}  // namespace

std::vector<std::uint64_t> planned_piece_starts(std::uint64_t size, unsigned pieces,
                                                unsigned threads) {
  threads = std::max(1u, threads);
  const unsigned rounds = (pieces + threads - 1) / threads;
  // Piece k's weight: kShrinkPerRound to the power of the rounds after its own (as a long
  // double: exact for the few rounds parse_chunked plans, and no overflow for any count).
  std::vector<long double> weight(pieces, 1);
  for (unsigned k = 0; k < pieces; ++k)
    for (unsigned r = k / threads + 1; r < rounds; ++r) weight[k] *= kShrinkPerRound;
  long double total = 0;
  for (const long double w : weight) total += w;
  std::vector<std::uint64_t> starts;
  long double before = 0;
  for (unsigned k = 0; k < pieces; ++k) {
    const long double at = static_cast<long double>(size) * before / total;
    starts.push_back(std::min(size, static_cast<std::uint64_t>(at)));
    before += weight[k];
  }
  return starts;
}

unsigned piece_count(std::uint64_t size, unsigned threads, std::uint64_t min_piece_bytes) {
  const std::uint64_t most =
      std::max<std::uint64_t>(1, size / std::max<std::uint64_t>(1, min_piece_bytes));
  return static_cast<unsigned>(
      std::clamp<std::uint64_t>(most, threads, std::uint64_t{threads} * kPiecesPerThread));
}

std::optional<Run> parse_chunked(const std::string& path, std::uint64_t size,
                                 const FormatSpec& spec, const IngestOptions& opt, unsigned threads,
                                 unsigned pieces) {
  if (!spec.record_start || !spec.make_line_parser || threads < 2 || pieces < 2 || opt.strict)
    return std::nullopt;
  Fd f(path);
  if (f.fd < 0) return std::nullopt;
  std::vector<std::uint64_t> cuts = cut_points(f, size, spec, pieces, threads);
  if (cuts.size() < 2) return std::nullopt;
  pieces = static_cast<unsigned>(cuts.size());
  cuts.push_back(size);
  std::vector<Piece> ps(pieces);
  for (unsigned k = 0; k < pieces; ++k) {
    ps[k].begin = cuts[k];
    ps[k].end = cuts[k + 1];
    if (k > 0) ps[k].priming = record_before(f, cuts[k], spec);
  }
  for (unsigned k = 1; k < pieces; ++k) ps[k].first_line = kRelativeFirstLine;
  parse_pieces(ps, threads, path, spec, opt);

  // Each piece's lines follow those of the pieces before it.
  std::uint64_t lines_before = ps[0].run.lines_read;
  for (unsigned k = 1; k < pieces; ++k) {
    const std::uint64_t shift = lines_before + 1 - kRelativeFirstLine;
    shift_piece_lines(ps[k].run, path, shift);
    if (ps[k].first_oversized != 0) ps[k].first_oversized += shift;
    lines_before += ps[k].run.lines_read;
  }
  // Merge in file order into the first piece.
  Run& out = ps[0].run;
  std::uint64_t oversized = ps[0].oversized, first_oversized = ps[0].first_oversized;
  for (unsigned k = 1; k < pieces; ++k) {
    Run& r = ps[k].run;
    out.iterations.append(std::move(r.iterations));
    for (auto& e : r.events) out.events.push_back(std::move(e));
    merge_diagnostics(out, r, opt.max_diagnostics);
    out.malformed_lines += r.malformed_lines;
    // The first value seen in the file wins, as in the streaming reader; say when a later
    // piece holds another.
    // The same value as the streaming reader keeps: the latest piece's for keys its parser
    // lets later lines replace, else the first (and then a warning naming both lines).
    for (const auto& c : out.meta.conflicts_with(r.meta)) {
      if (c.other.last_wins) {
        std::visit([&](const auto& v) { out.meta.set(c.key, v, c.other.source); }, c.other.value);
        continue;
      }
      add_diagnostic(
          out,
          Diagnostic{Diagnostic::Severity::kWarning, path, line_of_source(c.other.source, path),
                     meta_conflict_message(c.key, c.kept, c.other)},
          opt.max_diagnostics);
    }
    out.meta.fill_from(r.meta);
    merge_seen(out, r);
    if (ps[k].oversized > 0 && first_oversized == 0) first_oversized = ps[k].first_oversized;
    oversized += ps[k].oversized;
  }
  out.format = spec.name;
  out.inputs = {path};
  RunBuilder b(out, opt, path, 0);
  if (oversized > 0)
    b.warn(first_oversized,
           fmt::format("skipped {} line(s) longer than 16 MiB (the first is this one)", oversized));
  if (ps.back().unterminated) out.truncated = true;
  finalize_run(out, spec.timing, spec.single_iteration_records);
  return std::move(out);
}

}  // namespace mfu::detail
