// Post-processing shared by all formats (see parser.hpp: finalize_run).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "ingest/parser.hpp"
#include "ingest/rank_streams.hpp"

namespace mfu::detail {
namespace {

/// Info notes on what combining the streams did, and a warning when ranks disagree.
void note_stream_work(Run& run, const JobRecords& job) {
  const std::string file = run.inputs.empty() ? "" : run.inputs.front();
  auto info = [&](std::string m) {
    run.diagnostics.push_back(Diagnostic{Diagnostic::Severity::kInfo, file, 0, std::move(m)});
  };
  if (job.rank_records > 0)
    info(
        fmt::format("combined {} records of other ranks into their steps (several ranks print "
                    "each step); the slowest rank's time and timers are kept",
                    job.rank_records));
  if (job.micro_batches > 0)
    info(
        fmt::format("added {} micro-batch records into their steps (gradient accumulation "
                    "prints one line per micro-batch)",
                    job.micro_batches));
  if (job.duplicates > 0)
    info(fmt::format("dropped {} repeated records (the same step printed twice)", job.duplicates));
  if (job.reordered > 0)
    info(fmt::format("put {} records back in step order (lines written out of order)",
                     job.reordered));
  if (job.incarnations_disagree)
    run.diagnostics.push_back(Diagnostic{
        Diagnostic::Severity::kWarning, file, 0,
        "the ranks' step counters go back a different number of times: restarts are matched "
        "by their order, which may pair the wrong pieces"});
}

/// The name of input `file` (a record's or an event's), "" when there is none.
const std::string& input_name(const Run& run, std::uint16_t file) {
  static const std::string kNone;
  return file < run.inputs.size() ? run.inputs[file] : kNone;
}

/// Adds `d` unless the run holds the same diagnostic already.
void add_once(Run& run, Diagnostic d) {
  const bool held = std::any_of(run.diagnostics.begin(), run.diagnostics.end(), [&](const auto& x) {
    return x.severity == d.severity && x.line == d.line && x.file == d.file &&
           x.message == d.message;
  });
  if (!held) run.diagnostics.push_back(std::move(d));
}

/// The warning for a restart, from the last step before it and the first after it. A restart
/// the input states may resume at the step it died in, or after it (nothing redone).
std::string restart_warning(std::int64_t before, std::int64_t after, std::int64_t lost) {
  if (after > before)
    return fmt::format("a restart the input states after step {} (resumed at {}): nothing redone",
                       before, after);
  return fmt::format("{}: a restart, {} iteration(s) redone (counted as lost time)",
                     after < before
                         ? fmt::format("the step counter goes back from {} to {}", before, after)
                         : fmt::format("step {} starts again", after),
                     lost);
}
std::string restart_detail(std::int64_t before, std::int64_t after) {
  if (after < before) return fmt::format("step counter went back from {} to {}", before, after);
  return fmt::format("restarted after step {}, resumed at {}", before, after);
}

/// The restarts the input stated (native "restart" events) become marks where the records'
/// incarnations split; the restart events of the run are then derived from those incarnations
/// (step 4), so a stated restart is not counted twice. Restarts already placed at records
/// (`restarts_at` of a merge: those each input's reading found) are kept the same way.
std::vector<RestartMark> take_restart_marks(Run& run) {
  std::vector<RestartMark> marks;
  std::erase_if(run.events, [&](const Event& e) {
    if (e.kind != EventKind::kRestart) return false;
    marks.push_back({e.file, e.line, e.rank, std::nullopt});
    return true;
  });
  for (const std::size_t i : run.restarts_at) marks.push_back({0, 0, -1, i});
  run.restarts_at.clear();
  return marks;
}

/// Ranks peeled as node * kNodeRankStride + local ("1: [default3]:") become global ranks,
/// node * (local ranks per node) + local, with the count of local ranks the lines show: srun
/// numbers the nodes, torchrun the local ranks, and neither prints the global rank.
void renumber_node_ranks(Run& run) {
  std::int32_t local_ranks = 0;
  std::vector<std::int32_t> node_ids;  // nodes above 0, as the prefixes numbered them
  bool node_zero = false;
  for (const auto r : run.ranks) {
    if (r < kNodeRankStride) {
      node_zero = node_zero || r >= 0;
      local_ranks = std::max(local_ranks, r + 1);
      continue;
    }
    node_ids.push_back(r / kNodeRankStride);
    local_ranks = std::max(local_ranks, r % kNodeRankStride + 1);
  }
  if (node_ids.empty()) return;
  // Host names can number their nodes sparsely ("ip-10-0-0-1" folds to a large number): those
  // become 1..N in that order; small numbers (srun's labels, "worker-3") stay as they are.
  std::sort(node_ids.begin(), node_ids.end());
  node_ids.erase(std::unique(node_ids.begin(), node_ids.end()), node_ids.end());
  const bool sparse = node_ids.back() >= 1024;
  auto node_index = [&](std::int32_t node) {
    if (!sparse) return node;
    const auto at = std::lower_bound(node_ids.begin(), node_ids.end(), node) - node_ids.begin();
    return static_cast<std::int32_t>(at) + (node_zero ? 1 : 0);
  };
  auto global = [&](std::int32_t r) {
    return r < kNodeRankStride
               ? r
               : node_index(r / kNodeRankStride) * local_ranks + r % kNodeRankStride;
  };
  IterationTable& t = run.iterations;
  for (std::size_t i = 0; i < t.size(); ++i) {
    Iteration it = t[i];
    if (it.rank < kNodeRankStride) continue;
    it.rank = global(it.rank);
    t.set(i, it);
  }
  for (auto& e : run.events) e.rank = global(e.rank);
  std::vector<std::int32_t> seen;
  for (const auto r : run.ranks) {
    if (std::find(seen.begin(), seen.end(), global(r)) == seen.end()) seen.push_back(global(r));
  }
  run.ranks = std::move(seen);
}

/// What counting the iterations of each record found.
struct Counted {
  bool multi = false;  ///< some record stands for more than one iteration
  std::size_t jumps = 0;
  std::int64_t absent = 0, jump_from = 0, jump_to = 0;  ///< missing iterations, largest jump
  std::uint32_t jump_line = 0;
  std::uint16_t jump_file = 0;
};

/// The fields count_iterations reads.
constexpr RecordFields kCounted = RecordFields::kStep | RecordFields::kCount | RecordFields::kLine |
                                  RecordFields::kFile | RecordFields::kTime |
                                  RecordFields::kTimestamp;

/// Sets each record's iteration count (from the step counter when the parser did not know
/// it) and its step time from the timestamps when the log prints none; segments start at
/// `seg_start` (one per job incarnation).
Counted count_iterations(IterationTable& t, const std::vector<std::size_t>& seg_start,
                         bool single_iteration_records) {
  Counted out;
  bool& multi = out.multi;
  std::size_t& jumps = out.jumps;
  std::int64_t &absent = out.absent, &jump_from = out.jump_from, &jump_to = out.jump_to;
  std::uint32_t& jump_line = out.jump_line;
  const std::size_t n = t.size();
  std::size_t s = 0, b = 0, e = n;  // the segment [b, e) of record i
  double prev_ts = kUnknown;
  std::int64_t prev_step = 0;
  for_each_record(
      t,
      // The record as const: read from only the columns some record holds (a native log's
      // counts, files and timestamps are none). Its count and time are changed in copies.
      [&](std::size_t i, const Iteration& it) {
        while (s + 1 < seg_start.size() && i >= seg_start[s + 1]) ++s;
        if (i == seg_start[s]) {
          b = i;
          e = s + 1 < seg_start.size() ? seg_start[s + 1] : n;
          prev_ts = kUnknown;
        }
        std::uint32_t count = it.count;
        double time = it.time_s;
        if (count > 1) {
          // The parser knew how many iterations the record stands for (an averaged summary).
        } else if (single_iteration_records) {
          // One record, one iteration: a jump in the step counter is records that are missing.
          if (i > b && it.step - prev_step > 1) {
            const std::int64_t gap = it.step - prev_step - 1;
            if (jumps == 0 || gap > jump_to - jump_from - 1) {
              jump_from = prev_step;
              jump_to = it.step;
              jump_line = it.line;
              out.jump_file = it.file;
            }
            absent += gap;
            ++jumps;
          }
        } else if (i == b) {
          std::int64_t gap = 1;
          if (i + 1 < e) gap = std::max<std::int64_t>(1, t.step(i + 1) - it.step);
          std::int64_t c = s == 0 ? std::clamp<std::int64_t>(it.step, 1, gap) : gap;
          count = static_cast<std::uint32_t>(std::max<std::int64_t>(1, c));
        } else {
          const std::int64_t d = it.step - prev_step;
          count = static_cast<std::uint32_t>(std::clamp<std::int64_t>(d, 1, 1 << 30));
        }
        prev_step = it.step;
        if (count > 1) multi = true;
        // Step time from timestamps when the log prints none.
        if (!known(time) && i > b && known(it.timestamp_s) && known(prev_ts)) {
          const double dt = it.timestamp_s - prev_ts;
          if (dt > 0) time = dt / count;
        }
        prev_ts = it.timestamp_s;
        // Record i was read with its block: writing it back leaves the records still to read alone.
        if (count != it.count) t.set_count(i, count);
        if (!(time == it.time_s || (!known(time) && !known(it.time_s)))) t.set_time(i, time);
      },
      kCounted);

  return out;
}

}  // namespace

void finalize_run(Run& run, TimingKind timing, bool single_iteration_records) {
  renumber_node_ranks(run);
  std::vector<RestartMark> stated_restarts = take_restart_marks(run);
  IterationTable& t = run.iterations;
  const std::size_t n_in = t.size();
  if (n_in == 0) {
    run.timing = TimingKind::kNone;
    if (timing == TimingKind::kNone) return;  // a metadata file: it has no steps to miss
    run.diagnostics.push_back(
        Diagnostic{Diagnostic::Severity::kWarning, run.inputs.empty() ? "" : run.inputs.front(), 0,
                   fmt::format("no per-iteration records found: this {} log carries no step "
                               "timing mfu can use",
                               run.format)});
    return;
  }

  // 1. Per-rank streams to one record per step; restarts are where a rank's counter goes back
  // or where the input says so.
  JobRecords job = combine_rank_streams(std::move(t), run.meta, std::move(stated_restarts));
  t = std::move(job.table);
  run.restarts_at.assign(job.incarnations.begin() + 1, job.incarnations.end());
  run.rank_streams = std::move(job.streams);
  note_stream_work(run, job);
  if (const std::size_t folded = combine_rank_events(run.events); folded > 0)
    run.diagnostics.push_back(Diagnostic{
        Diagnostic::Severity::kInfo, run.inputs.empty() ? "" : run.inputs.front(), 0,
        fmt::format("combined {} events that several ranks printed for the same step (startup, "
                    "checkpoints): each counts once for the job",
                    folded)});
  const std::size_t n = t.size();

  // 2. Segments: one per job incarnation.
  const std::vector<std::size_t>& seg_start = job.incarnations;
  // 3. How many iterations each record stands for.
  const Counted counted = count_iterations(t, seg_start, single_iteration_records);
  const bool multi = counted.multi;
  const std::size_t jumps = counted.jumps;
  const std::int64_t absent = counted.absent, jump_from = counted.jump_from,
                     jump_to = counted.jump_to;
  const std::uint32_t jump_line = counted.jump_line;

  if (jumps > 0) {
    add_once(
        run,
        Diagnostic{Diagnostic::Severity::kWarning, input_name(run, counted.jump_file), jump_line,
                   fmt::format("the step counter jumps {} time(s) (the largest from {} to {}): {} "
                               "iteration(s) have no record "
                               "and are left out of the totals",
                               jumps, jump_from, jump_to, absent)});
  }

  // 4. Restart events.
  constexpr std::size_t kNamedRestarts = 5;
  if (seg_start.size() > kNamedRestarts + 1) {
    run.diagnostics.push_back(
        Diagnostic{Diagnostic::Severity::kWarning, run.inputs.empty() ? "" : run.inputs.front(), 0,
                   fmt::format("the step counter goes back {} times in all (restarts); the "
                               "first {} are listed",
                               seg_start.size() - 1, kNamedRestarts)});
  }
  for (std::size_t s = 1; s < seg_start.size(); ++s) {
    const Iteration before = t[seg_start[s] - 1];
    const Iteration after = t[seg_start[s]];
    Event e;
    e.kind = EventKind::kRestart;
    e.step = after.step;
    e.line = after.line;
    e.file = after.file;
    e.timestamp_s = after.timestamp_s;
    const std::int64_t restored = after.step - static_cast<std::int64_t>(after.count);
    e.steps_lost = std::max<std::int64_t>(0, before.step - restored);
    e.detail = restart_detail(before.step, after.step);
    // The first few restarts are named; the rest are counted (diagnostics stay bounded).
    // (An input of a merge warned of its own restarts already: the same warning is not
    // given twice.)
    if (s <= kNamedRestarts)
      add_once(run, Diagnostic{Diagnostic::Severity::kWarning, input_name(run, after.file),
                               after.line, restart_warning(before.step, after.step, e.steps_lost)});
    run.events.push_back(e);
  }
  std::stable_sort(run.events.begin(), run.events.end(), [](const Event& a, const Event& b) {
    if (a.file != b.file) return a.file < b.file;
    return a.line < b.line;
  });

  if (timing == TimingKind::kAveraged || timing == TimingKind::kSampled) {
    run.timing = multi ? timing : TimingKind::kPerIteration;
  } else {
    run.timing = timing;
  }
  // 5. Which fields were recovered: one pass in blocks, stopping once every field has been
  // seen (a phase no record holds is not looked for).
  // A field no record was given is not looked for either.
  constexpr std::size_t kScalars = 8;
  static constexpr RecordFields kScalarFields[kScalars] = {
      RecordFields::kTime,          RecordFields::kTimestamp,  RecordFields::kTokens,
      RecordFields::kSamples,       RecordFields::kLoss,       RecordFields::kModelFlops,
      RecordFields::kReportedFlops, RecordFields::kReportedMfu};
  std::array<bool, kScalars + kPhaseCount> seen{};
  std::array<bool, kScalars + kPhaseCount> decided{};
  for (std::size_t k = 0; k < kScalars; ++k) decided[k] = !t.may_hold(kScalarFields[k]);
  for (std::size_t p = 0; p < kPhaseCount; ++p)
    decided[kScalars + p] = !t.has_phase(static_cast<Phase>(p));
  auto missing = static_cast<std::size_t>(std::count(decided.begin(), decided.end(), false));
  std::vector<Iteration> block(std::min(kRecordBlock, n));
  // Only the columns some record holds: a column of unknowns alone is read to its end.
  const IterationTable::HeldColumns held = t.held_columns();
  for (std::size_t first = 0; first < n && missing > 0; first += kRecordBlock) {
    const std::size_t m = std::min(kRecordBlock, n - first);
    t.read_held(first, m, block.data(), RecordFields::kAll, held);
    for (std::size_t b = 0; b < m && missing > 0; ++b) {
      const Iteration& it = block[b];
      const double scalars[kScalars] = {it.time_s,
                                        it.timestamp_s,
                                        it.tokens,
                                        it.samples,
                                        it.loss,
                                        it.model_flops,
                                        it.reported_flops_per_gpu,
                                        it.reported_mfu};
      for (std::size_t k = 0; k < seen.size(); ++k) {
        const double v = k < kScalars ? scalars[k] : it.phase[k - kScalars];
        if (!decided[k] && known(v)) {
          seen[k] = decided[k] = true;
          --missing;
        }
      }
    }
  }
  constexpr std::size_t kLossField = 4;
  static_assert(kScalarFields[kLossField] == RecordFields::kLoss);
  if (run.loss_left_out) seen[kLossField] = true;
  if (!seen[0]) run.timing = TimingKind::kNone;
  static constexpr const char* kScalarNames[kScalars] = {
      "time", "timestamp",   "tokens",          "samples",
      "loss", "model_flops", "reported_tflops", "reported_mfu"};
  std::vector<std::string> fields;
  for (std::size_t k = 0; k < seen.size(); ++k) {
    if (!seen[k]) continue;
    fields.emplace_back(k < kScalars ? kScalarNames[k]
                                     : phase_key(static_cast<Phase>(k - kScalars)));
  }
  run.fields = std::move(fields);
}

}  // namespace mfu::detail
