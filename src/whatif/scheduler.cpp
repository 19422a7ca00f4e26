// Slurm accounting (sacct --parsable2) and the scheduler's share of a cluster's GPU time
// (scheduler.hpp).
#include "mfu/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "io/source.hpp"
#include "io/timestamp.hpp"
#include "mfu/error.hpp"
#include "mfu/whatif.hpp"
#include "text.hpp"

namespace mfu {
namespace {

std::vector<std::string_view> split_bars(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t from = 0;
  for (std::size_t bar; (bar = line.find('|', from)) != std::string_view::npos; from = bar + 1)
    out.push_back(line.substr(from, bar - from));
  out.push_back(line.substr(from));
  return out;
}

/// sacct's "2024-05-01T12:00:00" (UTC here: sacct prints the cluster's local time, and the
/// share depends only on differences); "Unknown", "None" and "" are unknown.
double sacct_time(std::string_view t) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  const std::string text(detail::trim(t));
  if (text.size() < 19 ||
      std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &s) != 6)
    return kUnknown;
  return detail::unix_seconds(y, mo, d, h, mi, s);
}

/// GPUs in AllocTRES: "gres/gpu=4", else the sum of typed "gres/gpu:h100=4" entries.
int tres_gpus(std::string_view tres) {
  int plain = -1, typed = 0;
  for (std::string_view item : detail::split(tres, ',')) {
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = item.substr(0, eq);
    const int n = std::atoi(std::string(item.substr(eq + 1)).c_str());
    if (key == "gres/gpu")
      plain = n;
    else if (key.rfind("gres/gpu:", 0) == 0)
      typed += n;
  }
  return plain >= 0 ? plain : typed;
}

int column(const std::vector<std::string>& header, std::string_view name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

bool wasted_state(std::string_view state) {
  for (std::string_view s : {"FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                             "PREEMPTED", "BOOT_FAIL", "DEADLINE"})
    if (state == s) return true;
  return false;
}

SlurmAccounting parse_sacct(std::string_view text, const std::string& origin) {
  SlurmAccounting out;
  std::vector<std::string> header;
  std::map<std::string, std::size_t> index;  // job id -> position in out.jobs
  std::size_t line_no = 0;
  for (std::string_view line : detail::split(text, '\n')) {
    ++line_no;
    line = detail::trim(line);
    if (line.empty()) continue;
    const auto f = split_bars(line);
    if (header.empty()) {
      for (auto h : f) header.push_back(detail::to_lower(detail::trim(h)));
      if (column(header, "jobid") < 0)
        throw Error(fmt::format("{}:{}: no JobID column in the header", origin, line_no),
                    "write it with sacct --parsable2 --format=JobID,JobName,Submit,Start,End,"
                    "AllocTRES,NNodes,State");
      continue;
    }
    if (f.size() != header.size())
      throw Error(fmt::format("{}:{}: {} fields, the header has {}", origin, line_no, f.size(),
                              header.size()),
                  "give sacct's --parsable2 output unchanged");
    ++out.rows;
    auto field = [&](std::string_view name) {
      const int c = column(header, name);
      return c < 0 ? std::string_view() : detail::trim(f[static_cast<std::size_t>(c)]);
    };
    const std::string_view id = field("jobid");
    const std::string job(id.substr(0, id.find('.')));
    if (id.find('.') != std::string_view::npos) {
      ++out.step_lines;  // a step of a job: its allocation is the job's own line
      if (index.count(job)) continue;
    }
    SlurmJob j;
    j.id = job;
    j.name = field("jobname");
    j.state = std::string(field("state").substr(0, field("state").find(' ')));
    j.submit_s = sacct_time(field("submit"));
    j.start_s = sacct_time(field("start"));
    j.end_s = sacct_time(field("end"));
    j.gpus = tres_gpus(field("alloctres"));
    j.nodes = std::atoi(std::string(field("nnodes")).c_str());
    if (auto it = index.find(job); it != index.end()) {
      out.jobs[it->second] = j;
      continue;
    }
    index[job] = out.jobs.size();
    out.jobs.push_back(std::move(j));
  }
  if (header.empty()) throw Error(fmt::format("{}: empty accounting export", origin));
  return out;
}

SlurmAccounting load_sacct(const std::string& path) {
  return parse_sacct(detail::read_all(*detail::open_source(path), std::size_t{1} << 30, path),
                     path);
}

SlurmAccounting accounting_from_jobs(const JobTrace& trace, int cluster_gpus) {
  if (cluster_gpus < 1) throw Error("the cluster's GPU count must be at least 1");
  // A job that never held GPU time needs no start; any other without one means replaying all.
  bool replay = false;
  for (const auto& j : trace.jobs)
    replay = replay || (!std::isfinite(j.start_s) && j.duration_s > 0);
  SlurmAccounting acct;
  acct.rows = trace.rows;
  std::vector<double> starts(trace.jobs.size());
  if (replay) {
    starts = replay_cluster(trace.jobs, 1, cluster_gpus, Placement::kPack).start_s;
    acct.source = "job trace, start times replayed first come first served";
  } else {
    for (std::size_t i = 0; i < trace.jobs.size(); ++i) starts[i] = trace.jobs[i].start_s;
    acct.source = "job trace";
  }
  for (std::size_t i = 0; i < trace.jobs.size(); ++i) {
    const Job& t = trace.jobs[i];
    if (!std::isfinite(starts[i])) {
      if (t.duration_s > 0)
        throw Error(fmt::format("job '{}' needs {} GPUs and the cluster has {}", t.name, t.gpus,
                                cluster_gpus),
                    "give the cluster's whole GPU count");
      continue;  // never ran
    }
    SlurmJob j;
    j.id = j.name = t.name;
    j.state = t.state;
    j.submit_s = t.submit_s;
    j.start_s = starts[i];
    j.end_s = starts[i] + t.duration_s;
    j.gpus = t.gpus;
    acct.jobs.push_back(std::move(j));
  }
  return acct;
}

SchedulerShare scheduler_share(const SlurmAccounting& acct, int cluster_gpus) {
  if (cluster_gpus < 1) throw Error("the cluster's GPU count must be at least 1");
  SchedulerShare s;
  s.source = acct.source;
  // Events: +gpus at start, -gpus at end; a job waits from submit to start.
  struct Change {
    double t;
    int held;     ///< GPUs taken (+) or given back (-)
    int waiting;  ///< +gpus when a job starts waiting, -gpus when it starts
  };
  std::vector<Change> ev;
  double first = kUnknown, last = kUnknown;
  for (const auto& j : acct.jobs) {
    ++s.jobs;
    if (j.gpus <= 0 || !std::isfinite(j.start_s) || !std::isfinite(j.end_s) || j.end_s < j.start_s)
      continue;
    ++s.gpu_jobs;
    const double held_h = j.gpus * (j.end_s - j.start_s) / 3600.0;
    s.allocated_gpu_h += held_h;
    if (wasted_state(j.state)) {
      s.wasted_gpu_h += held_h;
      ++s.wasted_jobs;
    }
    const double from = std::isfinite(j.submit_s) ? std::min(j.submit_s, j.start_s) : j.start_s;
    first = std::isfinite(first) ? std::min(first, from) : from;
    last = std::isfinite(last) ? std::max(last, j.end_s) : j.end_s;
    ev.push_back({j.start_s, j.gpus, 0});
    ev.push_back({j.end_s, -j.gpus, 0});
    if (from < j.start_s) {
      ev.push_back({from, 0, j.gpus});
      ev.push_back({j.start_s, 0, -j.gpus});
    }
  }
  if (ev.empty()) return s;
  std::sort(ev.begin(), ev.end(), [](const Change& a, const Change& b) { return a.t < b.t; });
  // The smallest waiting job decides whether free GPUs could have run something.
  std::multiset<int> waiting;
  int held = 0;
  for (std::size_t i = 0; i < ev.size();) {
    const double t = ev[i].t;
    for (; i < ev.size() && ev[i].t == t; ++i) {
      held += ev[i].held;
      if (ev[i].waiting > 0) waiting.insert(ev[i].waiting);
      if (ev[i].waiting < 0) waiting.erase(waiting.find(-ev[i].waiting));
    }
    if (held > cluster_gpus)
      throw Error(
          fmt::format("the jobs hold {} GPUs at once and the cluster has {}", held, cluster_gpus),
          "give the cluster's whole GPU count");
    if (i == ev.size()) break;
    const double free_h = (cluster_gpus - held) * (ev[i].t - t) / 3600.0;
    if (!waiting.empty() && *waiting.begin() <= cluster_gpus - held)
      s.idle_waiting_gpu_h += free_h;
    else
      s.idle_gpu_h += free_h;
  }
  s.span_s = last - first;
  s.capacity_gpu_h = cluster_gpus * s.span_s / 3600.0;
  return s;
}

}  // namespace mfu
