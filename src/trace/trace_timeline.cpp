#include "trace/trace_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "mfu/inputs.hpp"

namespace mfu::detail {
namespace {

struct Interval {
  std::int64_t start, end;
  std::size_t first;  // index of the GPU event that opened it
};

/// Merges sorted-by-start events of the kinds in `mask` into disjoint intervals.
std::vector<Interval> union_of(const std::vector<GpuEvent>& ev, unsigned mask) {
  std::vector<Interval> out;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (!(mask & (1u << static_cast<unsigned>(ev[i].kind)))) continue;
    if (ev[i].end <= ev[i].start) continue;
    if (!out.empty() && ev[i].start <= out.back().end) {
      out.back().end = std::max(out.back().end, ev[i].end);
    } else {
      out.push_back({ev[i].start, ev[i].end, i});
    }
  }
  return out;
}

/// Length of the part of [a, b) covered by `u` (disjoint, sorted), starting the search at `hint`.
std::int64_t covered(const std::vector<Interval>& u, std::int64_t a, std::int64_t b) {
  if (b <= a || u.empty()) return 0;
  auto it = std::lower_bound(u.begin(), u.end(), a,
                             [](const Interval& x, std::int64_t v) { return x.end <= v; });
  std::int64_t total = 0;
  for (; it != u.end() && it->start < b; ++it)
    total += std::min(b, it->end) - std::max(a, it->start);
  return total;
}

constexpr unsigned kC = 1u << static_cast<unsigned>(KernelKind::kCompute);
constexpr unsigned kM = 1u << static_cast<unsigned>(KernelKind::kComm);
constexpr unsigned kY = 1u << static_cast<unsigned>(KernelKind::kMemory);

/// A trace without device events: each ProfilerStep span (to the next step's start) is a step,
/// and the data-loader operators inside it are its data wait. What the rest of the step did on
/// a device is not in the trace, so it stays unattributed rather than guessed.
TraceRankSummary summarize_cpu_steps(const RawTrace& raw, TraceRankSummary s) {
  s.cpu_only = true;
  s.warnings.push_back(
      "a CPU-only trace (no GPU kernels): steps are the CPU's ProfilerStep spans; only their "
      "data-loader time is attributed, compute and communication on a device are not known");
  for (std::size_t k = 0; k < raw.steps.size(); ++k) {
    const std::int64_t a = raw.steps[k].start;
    const std::int64_t b =
        k + 1 < raw.steps.size() ? std::max(raw.steps[k + 1].start, a) : raw.steps[k].end;
    if (b <= a) continue;
    TraceStep st;
    st.step = raw.steps[k].step;
    st.end_s = static_cast<double>(raw.base_ns + b) * 1e-9;
    st.wall_s = static_cast<double>(b - a) * 1e-9;
    for (const auto& d : raw.data_spans) {
      const std::int64_t o = std::min(d.end, b) - std::max(d.start, a);
      if (o > 0) st.idle_data_s += static_cast<double>(o) * 1e-9;
    }
    s.window_s += st.wall_s;
    s.idle_data_s += st.idle_data_s;
    s.steps.push_back(st);
  }
  return s;
}

}  // namespace

TraceRankSummary summarize_trace(RawTrace& raw) {
  TraceRankSummary s;
  s.file = raw.file;
  s.rank = raw.rank;
  s.rank_source = raw.rank_source;
  s.world_size = raw.world_size;
  s.device = raw.device;
  if (raw.device >= 0 && static_cast<std::size_t>(raw.device) < raw.device_names.size())
    s.device_name = raw.device_names[static_cast<std::size_t>(raw.device)];
  else if (!raw.device_names.empty())
    s.device_name = raw.device_names.front();
  s.kernels = raw.kernels;
  s.memory_events = raw.memory_events;
  s.sync_events = raw.sync_events;
  s.truncated = raw.truncated;
  s.warnings = raw.warnings;
  const auto& ev = raw.gpu;
  if (ev.empty() && !raw.steps.empty()) return summarize_cpu_steps(raw, std::move(s));
  if (ev.empty()) {
    s.warnings.push_back("no GPU kernels in the trace: nothing to account for on the device");
    return s;
  }
  for (const auto& e : ev) s.comm_kernels += e.kind == KernelKind::kComm;

  // Step of each GPU event: the profiler step whose CPU range holds its launch (HTA's rule),
  // else the one holding its own start.
  auto launch_of = [&](std::int64_t corr) -> std::int64_t {
    auto it =
        std::lower_bound(raw.launches.begin(), raw.launches.end(), std::make_pair(corr, INT64_MIN));
    return (it != raw.launches.end() && it->first == corr) ? it->second : INT64_MIN;
  };
  auto step_at = [&](std::int64_t t) -> std::int64_t {
    auto it = std::upper_bound(raw.steps.begin(), raw.steps.end(), t,
                               [](std::int64_t v, const CpuSpan& sp) { return v < sp.start; });
    if (it == raw.steps.begin()) return -1;
    --it;
    return t < it->end ? static_cast<std::int64_t>(it - raw.steps.begin()) : -1;
  };
  std::vector<std::int64_t> step_of(ev.size(), -1);
  std::size_t joined = 0;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const std::int64_t l = ev[i].correlation >= 0 ? launch_of(ev[i].correlation) : INT64_MIN;
    if (l != INT64_MIN) ++joined;
    step_of[i] = raw.steps.empty() ? 0 : step_at(l != INT64_MIN ? l : ev[i].start);
  }
  s.launches = joined;
  const std::size_t n_steps = raw.steps.empty() ? 1 : raw.steps.size();
  if (raw.steps.empty())
    s.warnings.push_back("no ProfilerStep annotations: the whole trace is one window");

  // Windows: from a step's first kernel to the next step's first kernel; the last step ends
  // with its last kernel.
  std::vector<std::int64_t> first(n_steps, INT64_MAX), last(n_steps, INT64_MIN);
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (step_of[i] < 0) continue;
    const auto k = static_cast<std::size_t>(step_of[i]);
    first[k] = std::min(first[k], ev[i].start);
    last[k] = std::max(last[k], ev[i].end);
  }
  std::vector<std::size_t> live;
  for (std::size_t k = 0; k < n_steps; ++k)
    if (first[k] != INT64_MAX) live.push_back(k);
  if (live.empty()) {
    s.warnings.push_back(
        "no GPU kernel falls inside a ProfilerStep: the trace is read as one window");
    raw.steps.clear();
    return summarize_trace(raw);
  }

  const auto U_c = union_of(ev, kC);
  const auto U_m = union_of(ev, kM);
  const auto U_cm = union_of(ev, kC | kM);
  const auto U_all = union_of(ev, kC | kM | kY);

  for (std::size_t j = 0; j < live.size(); ++j) {
    const std::size_t k = live[j];
    const std::int64_t a = first[k];
    const std::int64_t b =
        j + 1 < live.size() ? std::max(first[live[j + 1]], a) : std::max(last[k], a);
    if (b <= a) continue;
    TraceStep st;
    st.step = raw.steps.empty() ? 0 : raw.steps[k].step;
    st.end_s = static_cast<double>(raw.base_ns + b) * 1e-9;
    st.wall_s = static_cast<double>(b - a) * 1e-9;
    const std::int64_t c = covered(U_c, a, b);
    const std::int64_t m = covered(U_m, a, b);
    const std::int64_t cm = covered(U_cm, a, b);
    const std::int64_t all = covered(U_all, a, b);
    st.compute_s = static_cast<double>(c) * 1e-9;
    st.comm_s = static_cast<double>(m) * 1e-9;
    st.comm_exposed_s = static_cast<double>(cm - c) * 1e-9;
    st.memory_exposed_s = static_cast<double>(all - cm) * 1e-9;
    st.idle_s = static_cast<double>((b - a) - all) * 1e-9;
    // Idle gaps: host-bound when the next kernel was launched after the device went idle.
    auto it = std::lower_bound(U_all.begin(), U_all.end(), a,
                               [](const Interval& x, std::int64_t v) { return x.end <= v; });
    std::int64_t gap_start = a;
    for (; it != U_all.end() && gap_start < b; ++it) {
      const std::int64_t g0 = gap_start, g1 = std::min(it->start, b);
      if (g1 > g0) {
        const GpuEvent& next = ev[it->first];
        const std::int64_t launch = next.correlation >= 0 ? launch_of(next.correlation) : INT64_MIN;
        if (launch != INT64_MIN && launch > g0) {
          const std::int64_t host = std::min(g1, launch) - g0;
          st.idle_host_s += static_cast<double>(host) * 1e-9;
          // The part of the host-bound wait spent in the data loader.
          for (const auto& d : raw.data_spans) {
            if (d.start >= g0 + host) break;
            const std::int64_t o = std::min(d.end, g0 + host) - std::max(d.start, g0);
            if (o > 0) st.idle_data_s += static_cast<double>(o) * 1e-9;
          }
        }
      }
      gap_start = std::max(gap_start, it->end);
    }
    // FLOPs the profiler counted for the operators of this step.
    if (!raw.steps.empty()) {
      const auto& sp = raw.steps[k];
      auto f0 = std::lower_bound(raw.flops.begin(), raw.flops.end(), sp.start,
                                 [](const FlopCount& f, std::int64_t v) { return f.ts < v; });
      for (; f0 != raw.flops.end() && f0->ts < sp.end; ++f0) st.flops += f0->flops;
    }
    s.steps.push_back(st);
  }
  // Collectives: the share of each that ran while no compute did, and its step.
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (ev[i].collective < 0) continue;
    auto& c = raw.collectives[static_cast<std::size_t>(ev[i].collective)];
    const std::int64_t d = ev[i].end - ev[i].start;
    c.exposed_fraction = d > 0 ? 1.0 - static_cast<double>(covered(U_c, ev[i].start, ev[i].end)) /
                                           static_cast<double>(d)
                               : 0.0;
    c.step = step_of[i] >= 0 && !raw.steps.empty()
                 ? raw.steps[static_cast<std::size_t>(step_of[i])].step
                 : -1;
    c.start_ns += raw.base_ns;
  }
  s.collectives = std::move(raw.collectives);
  double hidden = 0;
  for (const auto& st : s.steps) {
    s.window_s += st.wall_s;
    s.compute_s += st.compute_s;
    s.comm_s += st.comm_s;
    s.comm_exposed_s += st.comm_exposed_s;
    s.memory_exposed_s += st.memory_exposed_s;
    s.idle_s += st.idle_s;
    s.idle_host_s += st.idle_host_s;
    s.idle_data_s += st.idle_data_s;
    s.flops += st.flops;
    hidden += st.comm_s - st.comm_exposed_s;
  }
  s.overlap_ratio = s.comm_s > 0 ? hidden / s.comm_s : 0.0;
  s.has_flops = s.flops > 0;
  if (s.launches == 0)
    s.warnings.push_back(
        "no runtime launch events matched the kernels: host-bound idle cannot be told apart");
  return s;
}

TraceSummary combine_ranks(std::vector<TraceRankSummary> ranks) {
  TraceSummary out;
  std::sort(ranks.begin(), ranks.end(), [](const TraceRankSummary& a, const TraceRankSummary& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.file < b.file;
  });
  // Ranks seen twice (two files claiming the same rank) are reported.
  for (std::size_t i = 1; i < ranks.size(); ++i)
    if (ranks[i].rank >= 0 && ranks[i].rank == ranks[i - 1].rank)
      out.warnings.push_back(fmt::format("rank {} appears in two traces ({} and {})", ranks[i].rank,
                                         ranks[i - 1].file, ranks[i].file));
  int world = -1;
  for (const auto& r : ranks) world = std::max(world, r.world_size);
  if (world > 1) {
    std::size_t comm = 0;
    for (const auto& r : ranks) comm += r.comm_kernels;
    if (comm == 0)
      out.warnings.push_back(
          fmt::format("world size is {} but no communication kernel was found: check the kernel "
                      "names (add a pattern with {})",
                      world, input_phrase(Input::kCommKernel)));
  }
  if (ranks.size() >= 2) {
    // Match each collective across ranks by process group, collective and sequence (or
    // occurrence): the shortest duration is the transfer; the rest is waiting for the last rank.
    std::map<std::string, std::vector<std::pair<std::size_t, const CollectiveCall*>>> by_key;
    for (std::size_t r = 0; r < ranks.size(); ++r)
      for (const auto& c : ranks[r].collectives) by_key[c.key].emplace_back(r, &c);
    std::vector<std::map<std::int64_t, double>> wait_by_step(ranks.size());
    std::vector<std::map<std::int64_t, std::size_t>> last_by_step(ranks.size());
    for (const auto& [key, calls] : by_key) {
      if (calls.size() < 2) {
        ++out.unmatched_collectives;
        continue;
      }
      ++out.matched_collectives;
      std::int64_t dmin = INT64_MAX, start_max = INT64_MIN;
      std::size_t last = 0;
      for (const auto& [r, c] : calls) {
        dmin = std::min(dmin, c->dur_ns);
        if (c->start_ns > start_max) {
          start_max = c->start_ns;
          last = r;
        }
      }
      ++ranks[last].arrived_last;
      for (const auto& [r, c] : calls)
        if (r == last) ++last_by_step[r][c->step];
      for (const auto& [r, c] : calls) {
        const double wait = static_cast<double>(c->dur_ns - dmin) * 1e-9 * c->exposed_fraction;
        const double transfer = static_cast<double>(dmin) * 1e-9 * c->exposed_fraction;
        ranks[r].wait_s += wait;
        ranks[r].transfer_s += transfer;
        wait_by_step[r][c->step] += wait;
      }
    }
    for (std::size_t r = 0; r < ranks.size(); ++r)
      for (auto& st : ranks[r].steps) {
        auto it = wait_by_step[r].find(st.step);
        if (it != wait_by_step[r].end()) st.wait_s = std::min(it->second, st.comm_exposed_s);
        if (auto l = last_by_step[r].find(st.step); l != last_by_step[r].end())
          st.arrived_last = l->second;
      }
    // Stragglers: the ranks that arrive last at most collectives (the others wait for them).
    if (out.matched_collectives > 0) {
      std::size_t best = 0;
      for (const auto& r : ranks) best = std::max(best, r.arrived_last);
      const double share = static_cast<double>(best) / static_cast<double>(out.matched_collectives);
      const double fair = 1.0 / static_cast<double>(ranks.size());
      if (best > 0 && share > std::min(0.9, 2.0 * fair)) {
        for (const auto& r : ranks)
          if (r.arrived_last == best) out.stragglers.push_back(r.rank);
        out.straggler_reason = fmt::format(
            "arrived last at {} of {} matched collectives ({:.0f}%; an even share would be "
            "{:.0f}%)",
            best, out.matched_collectives, share * 100, fair * 100);
      }
    }
  }
  out.ranks = std::move(ranks);
  return out;
}

}  // namespace mfu::detail
