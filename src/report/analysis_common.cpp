#include "report/analysis_common.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "mfu/error.hpp"
#include "mfu/summary.hpp"
#include "mfu/units.hpp"

namespace mfu {

namespace detail {

std::string pct_or(const std::optional<double>& v, const char* fallback) {
  return v ? format_percent(*v) : std::string(fallback);
}

/// Without mfu's own count, the framework's: its FLOP/s per GPU over the peak (no GPU count
/// needed), else the MFU it prints. Labelled as the framework's; an impossible one is not used.
std::string framework_headline(const Analysis& a) {
  if (a.framework_mfu_steady && *a.framework_mfu_steady <= 1.0)
    return fmt::format(
        "MFU {} by the framework's own FLOP/s count ({} per GPU; mfu's own needs "
        "what 'not known' lists)",
        format_percent(*a.framework_mfu_steady),
        format_flop_rate(*a.framework_flops_per_s_per_gpu));
  if (a.framework_printed_mfu && *a.framework_printed_mfu <= 1.0)
    return fmt::format(
        "MFU {} as the framework prints it (its own peak and count; mfu's own "
        "needs what 'not known' lists)",
        format_percent(*a.framework_printed_mfu));
  return "MFU unknown";
}

std::string headline(const Analysis& a) {
  std::string s = a.mfu ? fmt::format("MFU {}", format_percent(*a.mfu)) : framework_headline(a);
  if (a.mfu_steady) s += fmt::format(" (steady state {})", format_percent(*a.mfu_steady));
  if (a.hfu) s += fmt::format(", HFU {}", format_percent(*a.hfu));
  if (known(a.gpus) || !a.gpu.empty()) {
    s += fmt::format(" on {}{}", known(a.gpus) ? format_number(a.gpus) + " x " : std::string(),
                     a.gpu.empty() ? std::string("an unknown accelerator") : a.gpu);
  }
  if (a.flops_source == "framework") s += " (FLOPs: the framework's own count)";
  return s;
}

std::vector<std::string> framework_lines(const Analysis& a) {
  std::vector<std::string> out;
  if (!a.framework_flops_per_s_per_gpu) return out;
  std::string l =
      fmt::format("the log prints {} per GPU", format_flop_rate(*a.framework_flops_per_s_per_gpu));
  if (a.framework_mfu_steady)
    l += fmt::format(" ({} of peak)", format_percent(*a.framework_mfu_steady));
  if (a.recomputed_flops_per_s_per_gpu && a.framework_agreement) {
    l += fmt::format("; mfu recomputes {} under the {} convention ({:+.1f}%)",
                     format_flop_rate(*a.recomputed_flops_per_s_per_gpu), a.framework_convention,
                     *a.framework_agreement * 100.0);
  }
  out.push_back(l);
  if (a.achieved_flops_per_s_per_gpu_steady && a.flops_source != "framework") {
    const double d =
        *a.achieved_flops_per_s_per_gpu_steady / *a.framework_flops_per_s_per_gpu - 1.0;
    out.push_back(fmt::format(
        "mfu's own count ({} convention): {} per GPU in steady state ({:+.1f}% vs the log)",
        a.convention, format_flop_rate(*a.achieved_flops_per_s_per_gpu_steady), d * 100.0));
  }
  return out;
}

/// The per-step rows of the trace table: at most 12 steps, each with every rank.
void per_step_rows(const TraceSummary& t, TraceTable& out) {
  constexpr std::size_t kMaxSteps = 12;
  std::vector<std::int64_t> steps;
  for (const auto& r : t.ranks)
    for (const auto& s : r.steps) steps.push_back(s.step);
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  if (steps.size() > kMaxSteps) {
    out.step_note = fmt::format("the first {} of {} traced steps (the JSON report has them all)",
                                kMaxSteps, steps.size());
    steps.resize(kMaxSteps);
  }
  out.step_header = {"step",   "rank", "time", "compute", "exposed",
                     "copies", "idle", "wait", "last at"};
  for (const std::int64_t n : steps)
    for (const auto& r : t.ranks)
      for (const auto& s : r.steps) {
        if (s.step != n) continue;
        out.step_rows.push_back(
            {std::to_string(n), r.rank >= 0 ? std::to_string(r.rank) : std::string("?"),
             format_duration(s.wall_s), format_duration(s.compute_s),
             format_duration(s.comm_exposed_s), format_duration(s.memory_exposed_s),
             format_duration(s.idle_s), t.ranks.size() > 1 ? format_duration(s.wait_s) : "-",
             t.ranks.size() > 1 ? std::to_string(s.arrived_last) : "-"});
      }
}

TraceTable trace_rows(const Analysis& a) {
  TraceTable out;
  if (!a.trace) return out;
  const TraceSummary& t = *a.trace;
  if (std::all_of(t.ranks.begin(), t.ranks.end(), [](const auto& r) { return r.cpu_only; })) {
    // No device events: a table of zeros would read as an idle GPU.
    for (const auto& r : t.ranks)
      out.notes.push_back(fmt::format(
          "{}: {} CPU ProfilerStep spans of {} on average; no device time in the trace", r.file,
          r.steps.size(),
          format_duration(r.window_s /
                          static_cast<double>(std::max<std::size_t>(1, r.steps.size())))));
    return out;
  }
  out.header = {"rank",    "steps", "step", "compute", "comm",
                "exposed", "idle",  "host", "overlap", "wait"};
  for (const auto& r : t.ranks) {
    const double n = static_cast<double>(std::max<std::size_t>(1, r.steps.size()));
    out.rows.push_back({r.rank >= 0 ? std::to_string(r.rank) : std::string("?"),
                        std::to_string(r.steps.size()), format_duration(r.window_s / n),
                        format_duration(r.compute_s / n), format_duration(r.comm_s / n),
                        format_duration(r.comm_exposed_s / n), format_duration(r.idle_s / n),
                        format_duration(r.idle_host_s / n),
                        r.comm_s > 0 ? format_percent(r.overlap_ratio, 0) : std::string("-"),
                        t.ranks.size() > 1 ? format_duration(r.wait_s / n) : std::string("-")});
  }
  per_step_rows(t, out);
  out.notes.push_back(
      "(per step; 'exposed' is communication with no compute running, 'host' the idle time "
      "before the CPU launched the next kernel, 'overlap' the share of communication hidden "
      "under compute, 'wait' the exposed collective time spent waiting for slower ranks)");
  if (t.ranks.size() > 1) {
    out.notes.push_back(fmt::format("{} collectives matched across ranks, {} seen on one rank only",
                                    t.matched_collectives, t.unmatched_collectives));
    if (!t.stragglers.empty()) {
      std::vector<std::string> ids;
      for (int s : t.stragglers) ids.push_back(std::to_string(s));
      out.notes.push_back(
          fmt::format("straggler rank(s) {}: {}", fmt::join(ids, ", "), t.straggler_reason));
    }
  }
  for (const auto& r : t.ranks)
    if (r.rank < 0)
      out.notes.push_back(
          fmt::format("{}: rank unknown (no distributedInfo, no rank in the file name)", r.file));
  return out;
}

std::vector<std::string> trace_table(const Analysis& a) {
  const TraceTable t = trace_rows(a);
  std::vector<std::string> out;
  // Right-aligned columns: the rank and step counts narrow, the durations as wide as
  // "1.234 ms", each at least as wide as its heading.
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::size_t w = c == 0 ? 5 : c == 1 ? 6 : c >= 8 ? 8 : c == 2 ? 10 : 9;
      l += fmt::format("{}{:>{}}", c ? " " : "", cells[c], w);
    }
    return l;
  };
  if (!t.header.empty()) out.push_back(line(t.header));
  for (const auto& r : t.rows) out.push_back(line(r));
  if (!t.step_rows.empty()) {
    out.push_back(t.step_note.empty() ? "per step:" : fmt::format("per step ({}):", t.step_note));
    auto step_line = [](const std::vector<std::string>& cells) {
      std::string l;
      for (std::size_t c = 0; c < cells.size(); ++c)
        l += fmt::format("{}{:>{}}", c ? " " : "", cells[c], c < 2 ? 6 : c == 8 ? 7 : 9);
      return l;
    };
    out.push_back(step_line(t.step_header));
    for (const auto& r : t.step_rows) out.push_back(step_line(r));
  }
  out.insert(out.end(), t.notes.begin(), t.notes.end());
  return out;
}

}  // namespace detail

void render_analysis(const Analysis& a, const Run& run, OutputFormat format, const RenderOptions& o,
                     std::ostream& out) {
  switch (format) {
    case OutputFormat::kText: detail::render_analysis_text(a, o, out); return;
    case OutputFormat::kJson: detail::render_analysis_json(a, run, o, out); return;
    case OutputFormat::kMarkdown: detail::render_analysis_markdown(a, out); return;
    case OutputFormat::kCsv: detail::render_analysis_csv(a, run, out); return;
    case OutputFormat::kHtml: detail::render_analysis_html(a, o, out); return;
    case OutputFormat::kSummary: out << summary_json(summarize_job(a, run)) << '\n'; return;
  }
  throw Error("unknown output format");
}

}  // namespace mfu
