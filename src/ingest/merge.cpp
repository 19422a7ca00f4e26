// Several parsed inputs to one run (see merge.hpp).
#include "ingest/merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "ingest/parser.hpp"
#include "ingest/trace_run.hpp"
#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
#include "mfu/trace.hpp"
#include "trace/trace_timeline.hpp"

namespace mfu::detail {
namespace {

void warn(Run& run, const std::string& file, std::string message, std::size_t cap) {
  add_diagnostic(run, Diagnostic{Diagnostic::Severity::kWarning, file, 0, std::move(message)}, cap);
}

void note(Run& run, std::string message) {
  run.diagnostics.push_back(Diagnostic{Diagnostic::Severity::kInfo, "", 0, std::move(message)});
}

// ---- do the inputs belong together? --------------------------------------------------------

/// Metadata that two inputs of one job cannot disagree on.
constexpr const char* kSameJobNumbers[] = {"gpus",  "layers", "hidden", "heads",
                                           "vocab", "tp",     "pp",     "seq_len"};
constexpr const char* kSameJobTexts[] = {"gpu_name", "model_name", "benchmark"};  // MLPerf

std::string meta_text(const MetaValue& v) {
  if (const auto* d = std::get_if<double>(&v.value)) return fmt::format("{:g}", *d);
  return std::get<std::string>(v.value);
}

/// The first difference between two inputs that says they are different jobs, or "".
std::string job_difference(const Run& a, const Run& b) {
  if (a.format != b.format)
    return fmt::format("the format: {} is {}, {} is {}", a.inputs.front(), a.format,
                       b.inputs.front(), b.format);
  auto differ = [&](const char* key) -> std::string {
    const auto ia = a.meta.all().find(key), ib = b.meta.all().find(key);
    if (ia == a.meta.all().end() || ib == b.meta.all().end()) return {};
    const std::string va = meta_text(ia->second), vb = meta_text(ib->second);
    if (va == vb) return {};
    return fmt::format("{}: {} ({}) against {} ({})", key, va, ia->second.source, vb,
                       ib->second.source);
  };
  for (const char* k : kSameJobNumbers)
    if (auto d = differ(k); !d.empty()) return d;
  for (const char* k : kSameJobTexts)
    if (auto d = differ(k); !d.empty()) return d;
  return {};
}

void check_belong_together(const std::vector<Run>& logs, const IngestOptions& opt, Run& out) {
  for (std::size_t i = 1; i < logs.size(); ++i) {
    const std::string d = job_difference(logs.front(), logs[i]);
    if (d.empty()) continue;
    const std::string what =
        fmt::format("'{}' and '{}' do not look like one job; they differ in {}",
                    logs.front().inputs.front(), logs[i].inputs.front(), d);
    if (!opt.force_merge)
      throw Error(what, fmt::format("analyze them one at a time, or give {} to merge them",
                                    input_phrase(Input::kForceMerge)));
    warn(out, "", what + "; merged as asked", opt.max_diagnostics);
    return;
  }
}

// ---- pieces and ranks ----------------------------------------------------------------------

bool steps_overlap(const Run& a, const Run& b) {
  if (a.iterations.empty() || b.iterations.empty()) return false;
  const auto a0 = a.iterations[0].step, a1 = a.iterations.back().step;
  const auto b0 = b.iterations[0].step, b1 = b.iterations.back().step;
  const auto lo = std::max(a0, b0), hi = std::min(a1, b1);
  if (hi < lo) return false;
  const double overlap = static_cast<double>(hi - lo + 1);
  const double shorter = static_cast<double>(std::min(a1 - a0, b1 - b0) + 1);
  return overlap >= 0.5 * shorter;
}

double start_key(const Run& r) {
  if (known(r.first_timestamp_s)) return r.first_timestamp_s;
  return r.iterations.empty() ? 0.0 : static_cast<double>(r.iterations[0].step);
}

/// A rank number in a file name ("rank3.log", "log_rank_12.txt"); -1 when none.
std::int32_t rank_in_name(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::size_t p = lower.rfind("rank");
  if (p == std::string::npos) return -1;
  std::size_t i = p + 4;
  while (i < lower.size() && (lower[i] == '_' || lower[i] == '-' || lower[i] == '.')) ++i;
  std::int32_t r = 0;
  const std::size_t start = i;
  while (i < lower.size() && std::isdigit(static_cast<unsigned char>(lower[i])) && i - start < 7)
    r = r * 10 + (lower[i++] - '0');
  return i == start ? -1 : r;
}

/// The rank an untagged input stands for within its piece.
std::int32_t input_rank(const Run& r, std::size_t index_in_piece) {
  const std::int32_t named = rank_in_name(r.inputs.front());
  return named >= 0 ? named : static_cast<std::int32_t>(index_in_piece);
}

/// Hash of a log's records (steps, times and timestamps): two copies of one file collide;
/// two ranks, whose clocks never agree to the digit, do not. 0 for a log without timestamps
/// (ranks may print the same averaged times).
std::size_t records_fingerprint(const Run& r) {
  if (!known(r.first_timestamp_s)) return 0;
  std::size_t h = r.iterations.size();
  for_each_record(
      r.iterations,
      [&](std::size_t, const Iteration& it) {
        h = h * 1000003u ^ std::hash<std::int64_t>{}(it.step);
        h = h * 1000003u ^ std::hash<double>{}(known(it.time_s) ? it.time_s : -1.0);
        h = h * 1000003u ^ std::hash<double>{}(known(it.timestamp_s) ? it.timestamp_s : -1.0);
      },
      RecordFields::kStep | RecordFields::kTime | RecordFields::kTimestamp);
  return h;
}

/// Warns once per input that repeats a rank of its piece (O(inputs + ranks)); `prints` are
/// the logs' records_fingerprint, taken before their records moved to the merged run.
void warn_repeated_ranks(const std::vector<Run>& logs, const std::vector<std::size_t>& piece,
                         const std::vector<std::vector<std::int32_t>>& ranks_of,
                         const std::vector<std::size_t>& prints, Run& out, std::size_t cap) {
  std::unordered_map<std::int32_t, std::size_t> holder;
  std::unordered_map<std::size_t, std::size_t> fingerprints;
  for (const std::size_t f : piece) {
    const Run& r = logs[f];
    std::string message;
    for (const std::int32_t rank : ranks_of[f]) {
      const auto [it, fresh] = holder.emplace(rank, f);
      if (!fresh && it->second != f) {
        message = fmt::format("holds rank {} as {} does: the same rank twice is counted once", rank,
                              logs[it->second].inputs.front());
        break;
      }
    }
    if (const std::size_t print = prints[f]; message.empty() && print != 0) {
      const auto [it, fresh] = fingerprints.emplace(print, f);
      if (!fresh)
        message = fmt::format(
            "has the same records and timestamps as {} (a copy of one log?): read as another "
            "rank, which leaves every step time as it is",
            logs[it->second].inputs.front());
    }
    if (!message.empty()) warn(out, r.inputs.front(), std::move(message), cap);
  }
}

/// The ranks whose records a log holds (its tags, or the one it stands for).
std::vector<std::int32_t> tagged_ranks(const Run& r) {
  std::vector<std::int32_t> out;
  for (const auto& s : r.rank_streams)
    if (s.rank >= 0) out.push_back(s.rank);
  return out;
}

// ---- building the merged run ---------------------------------------------------------------

void take_totals(Run& out, Run& r, std::size_t cap) {
  out.inputs.push_back(r.inputs.front());
  out.meta.fill_from(r.meta);  // the first input's value wins, as its source says
  merge_diagnostics(out, r, cap);
  out.malformed_lines += r.malformed_lines;
  out.truncated = out.truncated || r.truncated;
  merge_seen(out, r);
}

/// Appends one log's records and events; untagged ones take `rank` (-1: leave them). The
/// restarts its reading found stay at their records: the merged streams would not show every
/// one again (a stated restart resumed at the step it died in looks like a step printed twice).
void take_records(Run& out, Run& r, std::uint16_t file, std::int32_t rank) {
  const std::size_t first = out.iterations.size();
  for (const std::size_t i : r.restarts_at) out.restarts_at.push_back(first + i);
  // A large log's records move (a copy held every log twice, and took most of the time of
  // merging two ranks' files); a small one's are copied, a block at a time: a piece per log
  // holds its columns' first chunks (8,000 per-rank logs of 20 records: 115 MB peak, against
  // 85 MB copied).
  // 65,536 records: a judgement, past which a piece's first chunks are small beside it.
  constexpr std::size_t kMoveFrom = std::size_t{1} << 16;
  if (r.iterations.size() >= kMoveFrom) {
    IterationTable records;
    records.append(std::move(r.iterations));
    records.set_source(file, rank);
    out.iterations.append(std::move(records));
  } else {
    for_each_record(r.iterations, [&](std::size_t, Iteration it) {
      it.file = file;
      if (it.rank < 0) it.rank = rank;
      out.iterations.push_back(it);
    });
    r.iterations.clear();
  }
  for (auto e : r.events) {
    if (e.kind == EventKind::kRestart) continue;  // derived again from the merged streams
    e.file = file;
    if (e.rank < 0) e.rank = rank;
    out.events.push_back(std::move(e));
  }
}

Run merge_logs(std::vector<Run> logs, const IngestOptions& opt) {
  Run out;
  check_belong_together(logs, opt, out);
  const auto pieces = group_into_pieces(logs);
  out.format = logs.front().format;
  out.timing = logs.front().timing;
  std::vector<std::vector<std::int32_t>> ranks_of(logs.size());
  std::vector<std::size_t> prints(logs.size());
  for (std::size_t k = 0; k < logs.size(); ++k) prints[k] = records_fingerprint(logs[k]);
  std::uint16_t file = 0;
  for (const auto& piece : pieces) {
    for (std::size_t k = 0; k < piece.size(); ++k) {
      Run& r = logs[piece[k]];
      const std::int32_t rank = piece.size() > 1 ? input_rank(r, k) : -1;
      ranks_of[piece[k]] = tagged_ranks(r);
      if (ranks_of[piece[k]].empty() && rank >= 0) ranks_of[piece[k]].push_back(rank);
      take_totals(out, r, opt.max_diagnostics);
      take_records(out, r, file++, rank);
    }
    warn_repeated_ranks(logs, piece, ranks_of, prints, out, opt.max_diagnostics);
  }
  std::size_t rank_logs = 0;
  for (const auto& p : pieces) rank_logs = std::max(rank_logs, p.size());
  note(out, fmt::format("{} inputs read as {} piece(s) of one job, {} at most at the same time "
                        "(logs whose clocks overlap are ranks; pieces follow each other)",
                        logs.size(), pieces.size(), rank_logs));
  const FormatSpec* spec = find_format(out.format);
  finalize_run(out, spec ? spec->timing : TimingKind::kPerIteration,
               spec && spec->single_iteration_records);
  return out;
}

Run merge_traces(std::vector<Run> traces, const IngestOptions& opt) {
  // Several ranks' profiler traces: match their collectives and keep the slowest rank per step.
  Run out;
  std::vector<TraceRankSummary> ranks;
  for (auto& r : traces) {
    for (const auto& rs : r.trace->ranks) ranks.push_back(rs);
    out.inputs.push_back(r.inputs.front());
    out.meta.fill_from(r.meta);
    for (auto& d : r.diagnostics) {
      if (d.severity == Diagnostic::Severity::kWarning && !d.file.empty()) continue;
      add_diagnostic(out, std::move(d), opt.max_diagnostics);
    }
    out.bytes_read += r.bytes_read;
  }
  out.format = "kineto";
  out.meta.erase("rank");
  fill_run_from_trace(out, std::make_shared<TraceSummary>(combine_ranks(std::move(ranks))));
  finalize_run(out, TimingKind::kPerIteration);
  return out;
}

}  // namespace

std::vector<std::vector<std::size_t>> group_into_pieces(const std::vector<Run>& logs) {
  std::vector<std::size_t> order(logs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // A clock that never advances (one timestamp, or a coarse one) cannot say what overlaps.
  const bool clocked = std::all_of(logs.begin(), logs.end(), [](const Run& r) {
    return known(r.first_timestamp_s) && known(r.last_timestamp_s) &&
           r.last_timestamp_s > r.first_timestamp_s;
  });
  std::vector<std::vector<std::size_t>> pieces;
  if (clocked) {
    // Sweep in start order: a log that starts before the piece's latest end runs beside it.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return logs[a].first_timestamp_s < logs[b].first_timestamp_s;
    });
    double piece_end = 0;
    for (const std::size_t i : order) {
      if (pieces.empty() || logs[i].first_timestamp_s > piece_end) pieces.emplace_back();
      pieces.back().push_back(i);
      piece_end = std::max(pieces.back().size() == 1 ? 0.0 : piece_end, logs[i].last_timestamp_s);
    }
    for (auto& p : pieces) std::sort(p.begin(), p.end());  // ranks in input (name) order
    return pieces;
  }
  // Rank tags: logs that each hold their own ranks (no rank in two logs) run side by side;
  // logs that hold the same ranks follow each other.
  std::map<std::int32_t, std::size_t> holder;
  bool tagged = true, disjoint = true;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const auto ranks = tagged_ranks(logs[i]);
    tagged = tagged && !ranks.empty();
    for (const auto r : ranks) disjoint = holder.emplace(r, i).second && disjoint;
  }
  if (tagged && disjoint) return {order};
  bool ranks = !tagged;
  for (std::size_t i = 1; ranks && i < logs.size(); ++i) ranks = steps_overlap(logs[0], logs[i]);
  if (ranks) return {order};
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return start_key(logs[a]) < start_key(logs[b]);
  });
  for (const std::size_t i : order) pieces.push_back({i});
  return pieces;
}

Run merge_inputs(std::vector<Run> runs, const IngestOptions& opt) {
  std::vector<Run> logs, traces, metas;
  for (auto& r : runs) {
    if (r.format == "companion") continue;  // its metadata went into its own log already
    auto& into = r.format == "metadata" ? metas : r.trace != nullptr ? traces : logs;
    into.push_back(std::move(r));
  }
  if (logs.empty() && traces.empty())
    throw Error("the inputs hold no training log, only metadata files",
                "pass the log itself (with its system.json or model_config.yaml next to it)");
  Run out;
  if (logs.empty()) {
    out = traces.size() == 1 ? std::move(traces.front()) : merge_traces(std::move(traces), opt);
  } else {
    out = logs.size() == 1 ? std::move(logs.front()) : merge_logs(std::move(logs), opt);
    // A trace given with a log is not a rank of it: it calibrates the log's unattributed time
    // (the analysis first checks that it is of the same job).
    std::vector<std::string> trace_inputs;
    for (const auto& t : traces)
      trace_inputs.insert(trace_inputs.end(), t.inputs.begin(), t.inputs.end());
    if (!traces.empty()) {
      Run merged =
          traces.size() == 1 ? std::move(traces.front()) : merge_traces(std::move(traces), opt);
      out.calibration = merged.trace;
      for (auto& d : merged.diagnostics) out.diagnostics.push_back(std::move(d));
      out.calibration_inputs = trace_inputs;
      out.inputs.insert(out.inputs.end(), trace_inputs.begin(), trace_inputs.end());
    }
  }
  for (auto& m : metas) {
    // Metadata files describe the hardware and model; they never override the log itself.
    out.meta.fill_from(m.meta);
    out.inputs.push_back(m.inputs.front());
    for (auto& d : m.diagnostics) out.diagnostics.push_back(std::move(d));
  }
  return out;
}

}  // namespace mfu::detail
