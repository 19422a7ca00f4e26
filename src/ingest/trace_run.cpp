#include "ingest/trace_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace mfu::detail {

void fill_run_from_trace(Run& run, std::shared_ptr<const TraceSummary> summary) {
  const TraceSummary& s = *summary;
  run.iterations.clear();
  int world = -1;
  std::string world_src;
  for (const auto& r : s.ranks) {
    if (r.world_size > world) {
      world = r.world_size;
      world_src = r.file + " (distributedInfo)";
    }
  }
  if (world > 0) {
    run.meta.set("gpus", world, world_src);
  } else {
    run.meta.set("gpus", static_cast<double>(s.ranks.size()),
                 "one GPU per trace file (no distributedInfo)");
  }
  for (const auto& r : s.ranks) {
    if (!r.device_name.empty()) {
      run.meta.set("gpu_name", r.device_name, r.file + " (deviceProperties)", false);
      break;
    }
  }
  if (s.ranks.size() == 1 && s.ranks.front().rank >= 0)
    run.meta.set("rank", s.ranks.front().rank,
                 s.ranks.front().file + " (" + s.ranks.front().rank_source + ")");
  // One record per step: the slowest rank sets the pace of a synchronous step.
  std::map<std::int64_t, std::pair<const TraceStep*, int>> slowest;
  for (const auto& r : s.ranks) {
    for (const auto& st : r.steps) {
      auto& cur = slowest[st.step];
      if (cur.first == nullptr || st.wall_s > cur.first->wall_s) cur = {&st, r.rank};
    }
  }
  const bool cpu_only = std::any_of(s.ranks.begin(), s.ranks.end(),
                                    [](const TraceRankSummary& r) { return r.cpu_only; });
  for (const auto& [step, sr] : slowest) {
    const TraceStep& st = *sr.first;
    Iteration it;
    it.step = step;
    it.time_s = st.wall_s;
    it.timestamp_s = st.end_s;
    it.rank = sr.second;
    if (st.wall_s <= 0) continue;
    if (cpu_only) {
      // Only the data loader's share is known; the rest stays unattributed.
      it.at(Phase::kData) = st.idle_data_s;
    } else {
      it.at(Phase::kCompute) = st.compute_s;
      it.at(Phase::kComm) = st.comm_exposed_s;
      it.at(Phase::kData) = st.memory_exposed_s + st.idle_data_s;
      it.at(Phase::kIdle) = std::max(0.0, st.idle_s - st.idle_data_s);
    }
    run.iterations.push_back(it);
    const double start = st.end_s - st.wall_s;
    if (!known(run.first_timestamp_s) || start < run.first_timestamp_s)
      run.first_timestamp_s = start;
    if (!known(run.last_timestamp_s) || st.end_s > run.last_timestamp_s)
      run.last_timestamp_s = st.end_s;
  }
  run.ranks.clear();
  for (const auto& r : s.ranks)
    if (r.rank >= 0) run.ranks.push_back(r.rank);
  for (const auto& r : s.ranks) {
    for (const auto& w : r.warnings)
      run.diagnostics.push_back(Diagnostic{Diagnostic::Severity::kWarning, r.file, 0, w});
    if (r.truncated) run.truncated = true;
  }
  for (const auto& w : s.warnings)
    run.diagnostics.push_back(Diagnostic{Diagnostic::Severity::kWarning, "", 0, w});
  run.trace = std::move(summary);
}

}  // namespace mfu::detail
