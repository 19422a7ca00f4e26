// The ingestion driver: expands paths, detects formats, runs one parser per file (files in
// parallel), merges per-rank logs and restarted pieces, and attaches companion metadata files.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <thread>

#include "ingest/chunked.hpp"
#include "ingest/line_feed.hpp"
#include "ingest/merge.hpp"
#include "ingest/parser.hpp"
#include "io/line_reader.hpp"
#include "io/source.hpp"
#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
#include "mfu/trace.hpp"
#include "text.hpp"
#include "work_queue.hpp"

namespace mfu {
namespace fs = std::filesystem;
using detail::ByteSource;
using detail::FormatSpec;
using detail::RunBuilder;

namespace {

constexpr std::size_t kSniffBytes = std::size_t{1} << 20;

std::string read_head(ByteSource& src, std::size_t n) {
  // In 64 KiB steps: a short input does not pay for a MiB.
  std::string head;
  char buf[1 << 16];
  while (head.size() < n) {
    const std::size_t got = src.read(buf, std::min(sizeof buf, n - head.size()));
    if (got == 0) break;
    head.append(buf, got);
  }
  return head;
}

bool looks_binary(std::string_view head) {
  if (head.empty()) return false;
  std::size_t bad = 0;
  const std::size_t n = std::min<std::size_t>(head.size(), 4096);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(head[i]);
    if (c == 0 || (c < 32 && c != '\n' && c != '\r' && c != '\t' && c != 27 && c != '\f')) ++bad;
  }
  return bad * 20 > n;  // more than 5% control bytes
}

std::string format_list() {
  std::vector<std::string> names;
  for (const auto* f : detail::format_registry())
    if (std::string(f->name) != "metadata") names.emplace_back(f->name);
  return fmt::format("{}", fmt::join(names, ", "));
}

/// The format to read `head` with: the forced one, or the detected one (then `guess` holds the
/// detection, with its runner-up, for the mixed-format warning).
const FormatSpec& choose_format(std::string_view head, const std::string& name,
                                const std::string& forced, FormatGuess& guess) {
  if (!forced.empty()) {
    const FormatSpec* f = detail::find_format(forced);
    if (!f)
      throw Error(fmt::format("unknown format '{}'", forced),
                  fmt::format("known formats: {}", format_list()));
    return *f;
  }
  if (head.empty()) {
    throw Error(fmt::format("'{}' is empty", name),
                "point mfu at a training log, or pipe one in with '-'");
  }
  if (looks_binary(head)) {
    for (const auto* f : detail::format_registry())
      if (f->binary && f->sniff(head, fs::path(name).filename().string()) >= 1.0) return *f;
    throw Error(fmt::format("'{}' looks like binary data, not a training log", name),
                fmt::format("mfu reads text logs (plain, .gz or .zst) and TensorBoard event "
                            "files: {}",
                            format_list()));
  }
  guess = detect_format(head, fs::path(name).filename().string());
  const FormatGuess& g = guess;
  if (g.name.empty()) {
    std::string nearest = g.runner_up.empty() ? "" : fmt::format("; nearest: {}", g.runner_up);
    throw Error(
        fmt::format("cannot tell the format of '{}': no known record lines in its first MiB{}",
                    name, nearest),
        fmt::format("formats tried: {}; force one with {}", format_list(),
                    input_phrase(Input::kFormat)));
  }
  return *detail::find_format(g.name);
}

/// Parses one input into its own Run.
/// Lines of the head that look like records of mfu's native format.
std::size_t native_looking_lines(std::string_view head) {
  std::size_t n = 0, pos = 0;
  while (pos < head.size()) {
    std::size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) nl = head.size();
    const std::string_view l = detail::trim(head.substr(pos, nl - pos));
    if (!l.empty() && l.front() == '{' && detail::contains(l, "\"step\"") &&
        (detail::contains(l, "\"time_s\"") || detail::contains(l, "\"time_ms\"")))
      ++n;
    pos = nl + 1;
  }
  return n;
}

/// A warning when the head also holds many records of another format (two logs written into
/// one file): those lines are not read. `g` is the detection of the head (empty when forced).
std::string mixed_format_warning(std::string_view head, const FormatGuess& g,
                                 const FormatSpec& spec) {
  if (g.name.empty()) return {};  // a forced format: the user chose
  if (!g.runner_up.empty() && g.runner_up_score >= 3 && g.runner_up_score >= 0.2 * g.score &&
      g.name == spec.name)
    return fmt::format(
        "the file also has lines of the {} format (evidence {} against {} for {}); they are not "
        "read: split the file, or force a format with {}",
        g.runner_up, g.runner_up_score, g.score, spec.name, input_phrase(Input::kFormat));
  if (std::string_view(spec.name).rfind("native", 0) != 0 &&
      std::string_view(spec.name) != "hf-trainer") {
    if (const std::size_t n = native_looking_lines(head); n >= 3)
      return fmt::format(
          "{} lines in the first MiB look like mfu native records, but the file is read as {}; "
          "they "
          "are not read: split the file, or force the native format with {}",
          n, spec.name, input_phrase(Input::kFormat));
  }
  return {};
}

Run parse_input(std::unique_ptr<ByteSource> src, const std::string& name,
                const IngestOptions& opt) {
  std::string head = read_head(*src, kSniffBytes);
  if (head.empty() && src->truncated())
    throw Error(
        fmt::format(
            "'{}' is a {} stream cut off before its first complete block: nothing can be read",
            name, src->encoding()),
        "copy the file again once the job has closed it, or give the uncompressed log");
  FormatGuess guess;
  const FormatSpec& spec = choose_format(head, name, opt.format, guess);
  const std::string mixed = mixed_format_warning(head, guess, spec);
  if (opt.on_progress) opt.on_progress(fmt::format("reading {} as {}", name, spec.name));
  Run run;
  run.format = spec.name;
  run.inputs.push_back(name);
  RunBuilder b(run, opt, name, 0);
  if (!mixed.empty()) b.warn(0, mixed);
  auto whole = detail::with_prefix(std::move(src), std::move(head));
  if (spec.parse_document) {
    const std::string text = detail::read_all(*whole, spec.document_limit, name);
    run.bytes_read = text.size();
    spec.parse_document(text, b);
  } else if (spec.parse_stream) {
    spec.parse_stream(*whole, b);
  } else {
    detail::LineReader reader(*whole);
    auto parser = spec.make_line_parser(b);
    detail::LineFeed(spec, *parser, b).all(reader);
    parser->finish();
    run.lines_read = reader.line_number();
    run.bytes_read = reader.bytes_read();
    if (reader.oversized_lines() > 0) {
      b.warn(reader.first_oversized_line(),
             fmt::format("skipped {} line(s) longer than 16 MiB (the first is this one)",
                         reader.oversized_lines()));
    }
    if (reader.unterminated_last_line()) {
      run.truncated = true;
      if (b.last_malformed_line == reader.line_number() && reader.line_number() > 0)
        b.warn(reader.line_number(),
               fmt::format("the file ends in the middle of this line: the job was cut off or is "
                           "still writing ({} waits for the rest)",
                           input_phrase(Input::kFollow)));
    }
  }
  b.finish();
  if (whole->truncated()) {
    run.truncated = true;
    b.warn(0,
           fmt::format(
               "the {} stream ends before its end marker: the file is cut off, so the last records "
               "may be missing",
               whole->encoding()));
  }
  detail::finalize_run(run, spec.timing, spec.single_iteration_records);
  return run;
}

/// Parses one file, in parallel pieces when it is large, plain and its format allows.
Run parse_path(const std::string& path, const IngestOptions& opt, unsigned threads) {
  const std::uint64_t size = threads > 1 ? detail::plain_file_size(path) : 0;
  if (size > 0 && size >= opt.parallel_min_bytes) {
    auto src = detail::open_source(path);
    const std::string head = read_head(*src, kSniffBytes);
    FormatGuess guess;
    const FormatSpec& spec = choose_format(head, path, opt.format, guess);
    if (spec.record_start) {
      // Pieces of at least a quarter of the size that is cut at all (8 MiB by default).
      const unsigned pieces = detail::piece_count(size, threads, opt.parallel_min_bytes / 4);
      if (opt.on_progress)
        opt.on_progress(fmt::format("reading {} as {} in {} pieces on {} threads", path, spec.name,
                                    pieces, threads));
      if (auto r = detail::parse_chunked(path, size, spec, opt, threads, pieces)) {
        if (const std::string mixed = mixed_format_warning(head, guess, spec); !mixed.empty())
          detail::add_diagnostic(*r, Diagnostic{Diagnostic::Severity::kWarning, path, 0, mixed},
                                 opt.max_diagnostics);
        return std::move(*r);
      }
    }
  }
  return parse_input(detail::open_source(path), path, opt);
}

std::vector<std::string> expand(const std::vector<std::string>& paths,
                                std::vector<Diagnostic>& skipped) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (p != "-" && fs::is_directory(p, ec)) {
      std::vector<std::string> files;
      for (fs::directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
           !ec && it != end; it.increment(ec)) {
        const auto& entry = *it;
        const std::string fname = entry.path().filename().string();
        if (fname.empty() || fname[0] == '.') continue;
        std::error_code e2;
        if (entry.is_directory(e2)) continue;  // one level: sub-directories are other runs
        if (!entry.is_regular_file(e2)) {
          // Broken links, pipes and sockets: reading them could fail or block forever.
          skipped.push_back(Diagnostic{
              Diagnostic::Severity::kWarning, entry.path().string(), 0,
              entry.is_symlink(e2) ? "skipped: a link to nothing"
                                   : "skipped: not a regular file (a pipe, socket or device)"});
          continue;
        }
        if (::access(entry.path().c_str(), R_OK) != 0) {
          skipped.push_back(Diagnostic{Diagnostic::Severity::kWarning, entry.path().string(), 0,
                                       "skipped: the file is not readable"});
          continue;
        }
        if (entry.file_size(e2) == 0 && !e2) {
          // A log that was never written (a rank that died at once, a marker file).
          skipped.push_back(Diagnostic{Diagnostic::Severity::kWarning, entry.path().string(), 0,
                                       "skipped: the file is empty"});
          continue;
        }
        files.push_back(entry.path().string());
      }
      if (ec) throw Error(fmt::format("cannot list directory '{}': {}", p, ec.message()));
      std::sort(files.begin(), files.end());
      if (files.empty()) throw Error(fmt::format("directory '{}' holds no readable files", p));
      out.insert(out.end(), files.begin(), files.end());
    } else {
      out.push_back(p);
    }
  }
  return out;
}

/// Companion files that describe the hardware or model of a log next to them.
std::vector<std::string> companions(const std::string& path) {
  std::vector<std::string> out;
  if (path == "-") return out;
  const fs::path p(path);
  std::error_code ec;
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string stem = p.filename().string();
  // MLPerf: <submitter>_<system>_<benchmark>_result_N.txt next to <submitter>_<system>_system.json.
  if (stem.find("result") != std::string::npos) {
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string f = it->path().filename().string();
      if (!detail::ends_with(f, "_system.json")) continue;
      const std::string prefix = f.substr(0, f.size() - std::string("system.json").size());
      if (detail::starts_with(stem, prefix)) out.push_back(it->path().string());
    }
  }
  // Megatron-LM CI: golden_values_*.json next to model_config.yaml.
  if (stem.find("golden_values") != std::string::npos) {
    const std::size_t k = stem.find("golden_values");
    const std::string prefix = stem.substr(0, k);
    for (const std::string& candidate :
         {prefix + "model_config.yaml", std::string("model_config.yaml")}) {
      const fs::path c = dir / candidate;
      if (fs::is_regular_file(c, ec)) {
        out.push_back(c.string());
        break;
      }
    }
  }
  return out;
}

/// For each input, the logs it is a companion of (its system.json or model_config.yaml; MLPerf's
/// results of one system share one system.json). A directory of several runs then gives each
/// run its own model and hardware, not every run the union of all of them.
std::vector<std::vector<std::size_t>> companion_owners(const std::vector<std::string>& files) {
  std::vector<std::vector<std::size_t>> owners(files.size());
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string name = fs::path(files[i]).filename().string();
    if (detail::ends_with(name, "_system.json") || detail::ends_with(name, "model_config.yaml"))
      index.emplace(files[i], i);
  }
  // Without a companion among the inputs (a directory of rank logs), no log's directory is
  // listed: 8,000 rank files cost nothing here.
  if (index.empty()) return owners;
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (const auto& c : companions(files[i])) {
      const auto it = index.find(c);
      if (it != index.end() && it->second != i) owners[it->second].push_back(i);
    }
  }
  return owners;
}

/// Copies each companion's metadata into its logs' runs (a log's own lines win) and leaves the
/// companion as an empty run that the merge skips.
void attach_companions(std::vector<Run>& runs,
                       const std::vector<std::vector<std::size_t>>& owners) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (owners[i].empty() || runs[i].format != "metadata") continue;
    for (const std::size_t o : owners[i]) {
      runs[o].meta.fill_from(runs[i].meta);
      runs[o].inputs.push_back(runs[i].inputs.front());
    }
    Run& first = runs[owners[i].front()];
    for (auto& d : runs[i].diagnostics) first.diagnostics.push_back(std::move(d));
    runs[i] = Run{};
    runs[i].format = "companion";
  }
}

/// Parses each of `files` into its slot of `runs` on `threads` threads taking them in turn. (A
/// thread started for each file, in batches of `threads` that each waited for their slowest
/// file, took 3x as long on 1,000 small rank files: BM_IngestRankFiles.) After a file fails no
/// other is started, and the first failed file in order is the error.
void parse_files(const std::vector<std::string>& files, const IngestOptions& options,
                 unsigned threads, std::vector<Run>& runs) {
  detail::run_in_turn(
      files.size(), threads,
      [&](std::size_t i) {
        runs[i] = parse_input(detail::open_source(files[i]), files[i], options);
      },
      true);
}

}  // namespace

Run ingest(const std::vector<std::string>& paths, const IngestOptions& options) {
  if (paths.empty())
    throw Error("no input given", "pass a log file, a directory, or '-' for stdin");
  std::vector<Diagnostic> skipped;
  std::vector<std::string> files = expand(paths, skipped);
  if (files.size() == 1) {
    for (const auto& c : companions(files.front())) files.push_back(c);
  }
  const auto owners = companion_owners(files);
  if (files.size() > 65000) throw Error("too many input files (more than 65000)");
  std::vector<Run> runs(files.size());
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads =
      std::max(1u, std::min<unsigned>(options.threads ? options.threads : hw, 8));
  if (files.size() == 1 || threads == 1) {
    for (std::size_t i = 0; i < files.size(); ++i) runs[i] = parse_path(files[i], options, threads);
  } else {
    parse_files(files, options, threads, runs);
  }
  attach_companions(runs, owners);
  Run out = detail::merge_inputs(std::move(runs), options);
  for (auto& d : skipped) out.diagnostics.insert(out.diagnostics.begin(), d);
  detail::make_printable(out);
  return out;
}

Run ingest_text(std::string_view text, const std::string& name, const IngestOptions& options) {
  Run r = parse_input(detail::memory_source(text), name, options);
  detail::make_printable(r);
  return r;
}

FormatGuess detect_format(std::string_view head, std::string_view filename) {
  FormatGuess best;
  double second = 0;
  // Line formats are detected on the peeled bodies too (prefixes of launchers and loggers),
  // documents and CSV tables on the bytes as they are.
  const std::string peeled = detail::peel_text(head);
  // A head with no prefix to peel gives the same text, and a sniffer the same score: once.
  const bool any_peeled = peeled != head;
  for (const auto* f : detail::format_registry()) {
    double s = f->sniff(head, filename);
    if (any_peeled && f->make_line_parser && !f->raw_lines)
      s = std::max(s, f->sniff(peeled, filename));
    if (s > best.score) {
      if (!best.name.empty()) {
        second = best.score;
        best.runner_up = best.name;
      }
      best.score = s;
      best.name = f->name;
    } else if (s > second && s > 0) {
      second = s;
      best.runner_up = f->name;
    }
  }
  best.runner_up_score = second;
  // Scores below 1 are hints (a keyword seen, no record parsed): they name the nearest
  // format in the error message but never choose it.
  if (best.score < 1.0) {
    if (best.score > 0) best.runner_up = best.name;
    best.name.clear();
  }
  return best;
}

const std::vector<FormatInfo>& known_formats() {
  static const std::vector<FormatInfo> list = [] {
    std::vector<FormatInfo> v;
    for (const auto* f : detail::format_registry())
      v.push_back(FormatInfo{f->name, f->description});
    return v;
  }();
  return list;
}

}  // namespace mfu

namespace mfu::detail {

const std::vector<const FormatSpec*>& format_registry() {
  // Order breaks ties: specific formats before generic ones.
  // clang-format off
  static const std::vector<const FormatSpec*> registry = {
      &kineto_format(),        &tensorboard_format(),    &mlperf_format(),
      &megatron_golden_format(), &hf_trainer_state_format(), &metadata_format(),
      &llamafactory_format(),  &native_jsonl_format(),   &native_csv_format(),
      &wandb_csv_format(),     &lightning_csv_format(),  &torchtitan_format(),
      &maxtext_format(),       &deepspeed_format(),      &megatron_format(),
      &nanogpt_format(),       &nemo_format(),           &nanotron_format(),
      &torchtune_format(),     &verl_format(),           &fairseq_format(),
      &olmo_format(),          &composer_format(),       &wandb_history_format(),
      &wandb_summary_format(), &hf_trainer_format(),     &generic_format(),
      &pattern_format()};
  // clang-format on
  return registry;
}

const FormatSpec* find_format(std::string_view name) {
  for (const auto* f : format_registry())
    if (iequals(f->name, name)) return f;
  return nullptr;
}

}  // namespace mfu::detail
