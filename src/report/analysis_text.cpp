// The screen report of `mfu analyze`: headline, the waterfall as bars, stalls, fixes.
#include <fmt/format.h>

#include <algorithm>

#include "mfu/units.hpp"
#include "report/analysis_common.hpp"
#include "report/wrap.hpp"

namespace mfu::detail {
namespace {

const char* colour_of(const std::string& bucket) {
  if (bucket == "compute") return "\x1b[32m";
  if (bucket == "compute_inefficiency") return "\x1b[33m";
  if (bucket == "comm") return "\x1b[35m";
  if (bucket == "io") return "\x1b[36m";
  if (bucket == "idle") return "\x1b[31m";
  return "\x1b[34m";
}

/// The stalls (the worst three) and the fixes worth most, with what would attribute the
/// unattributed time.
void stalls_and_fixes(const Analysis& a, const char* bold, const char* reset, std::size_t width,
                      std::ostream& out) {
  if (a.stalls.count > 0) {
    out << fmt::format(
        "\n{}stalls{}: {} slower than {} (median + 3 sigma, sigma = 1.4826 MAD) cost {}", bold,
        reset, count_of(static_cast<double>(a.stalls.count), "record"),
        format_duration(a.stalls.threshold_s), format_duration(a.stalls.excess_s));
    if (a.stalls.period_steps)
      out << fmt::format(
          "; they recur every {} steps{}", *a.stalls.period_steps,
          a.stalls.period_cause.empty() ? std::string() : " (" + a.stalls.period_cause + ")");
    out << '\n';
    for (std::size_t i = 0; i < std::min<std::size_t>(3, a.stalls.worst.size()); ++i) {
      const auto& s = a.stalls.worst[i];
      const char* at = s.cause == "checkpoint" ? " at a checkpoint"
                       : s.cause == "eval"     ? " at an evaluation"
                                               : "";
      out << fmt::format("  step {}: {} (+{}){}\n", s.step, format_duration(s.time_s),
                         format_duration(s.excess_s), at);
    }
  }
  if (!a.fixes.empty()) {
    out << fmt::format("\n{}fix first{}\n", bold, reset);
    int k = 1;
    for (const auto& f : a.fixes) {
      out << fmt::format(
          "  {}. {}: {}{}\n", k++, f.label, format_duration(f.seconds),
          f.mfu_gain > 0 ? fmt::format(" (+{:.1f} MFU points if removed)", f.mfu_gain * 100) : "");
      out << wrap(f.advice, width, "     ", "     ");
    }
  }
  if (!a.attribution_hint.empty()) {
    if (a.fixes.empty()) out << fmt::format("\n{}fix first{}\n", bold, reset);
    out << wrap(a.attribution_hint, width, "  ", "  ");
  }
}

}  // namespace

void render_analysis_text(const Analysis& a, const RenderOptions& o, std::ostream& out) {
  const char* bold = o.color ? "\x1b[1m" : "";
  const char* dim = o.color ? "\x1b[2m" : "";
  const char* reset = o.color ? "\x1b[0m" : "";
  out << fmt::format("{}{}{}\n", bold, headline(a), reset);
  std::vector<std::string> facts;
  if (a.achieved_flops_per_s_per_gpu)
    facts.push_back(fmt::format(
        "achieved {} per GPU{}", format_flop_rate(*a.achieved_flops_per_s_per_gpu),
        known(a.peak_flops_per_gpu)
            ? fmt::format(" of {} ({} dense)", format_flop_rate(a.peak_flops_per_gpu), a.dtype)
            : std::string()));
  if (a.tokens_per_s)
    facts.push_back(fmt::format(
        "{} tokens/s{}", format_count(*a.tokens_per_s),
        a.tokens_per_s_per_gpu ? fmt::format(" ({} per GPU)", format_count(*a.tokens_per_s_per_gpu))
                               : std::string()));
  else if (a.tokens_per_s_per_gpu)
    facts.push_back(fmt::format("{} tokens/s per GPU", format_count(*a.tokens_per_s_per_gpu)));
  if (a.per_gpu)
    facts.push_back(
        "per GPU: the log prints a per-GPU rate and the GPU count is unknown, so the "
        "job's totals and GPU-hours are too (MFU does not depend on the count)");
  if (!a.framework_disagreement.empty()) facts.push_back("note: " + a.framework_disagreement);
  const auto width = static_cast<std::size_t>(std::max(40, o.width));
  for (const auto& f : facts) out << wrap(f, width, "  ", "    ");
  out << fmt::format("  step {} median (p05 {}, p95 {}) over {}\n",
                     format_duration(a.step_time.median), format_duration(a.step_time.p05),
                     format_duration(a.step_time.p95),
                     count_of(static_cast<double>(a.iterations_analyzed), "steady iteration"));
  out << fmt::format("  wall time {}{}{}", format_duration(a.wall_time_s),
                     a.clock_source.empty() ? "" : " (from " + a.clock_source + ")",
                     known(a.gpus) ? fmt::format(" on {} = {}", count_of(a.gpus, "GPU"),
                                                 format_gpu_time(a.gpu_hours))
                                   : std::string());
  if (a.total_cost) out << fmt::format(", {}", format_money(*a.total_cost));
  if (a.total_energy_kwh) out << fmt::format(", {} kWh at TDP", format_figure(*a.total_energy_kwh));
  out << '\n';
  if (a.warmup_iterations > 0)
    out << fmt::format("  warm-up: {} ({}) left out of the steady-state figures\n",
                       count_of(static_cast<double>(a.warmup_iterations), "iteration"),
                       format_duration(a.warmup_time_s));
  if (a.goodput && (*a.goodput < 0.995 || a.restarts > 0))
    out << fmt::format(
        "  goodput {}{}\n", format_percent(*a.goodput),
        a.restarts
            ? fmt::format(" ({}, {} redone)", count_of(static_cast<double>(a.restarts), "restart"),
                          count_of(static_cast<double>(a.steps_lost), "step"))
            : std::string());

  out << fmt::format("\n{}where the time went{}\n", bold, reset);
  // A row is 68 columns besides its bar: the bar takes what the width leaves, 10 to 40.
  const int bar_width = std::max(10, std::min(40, o.width - 68));
  for (const auto& b : a.buckets) {
    if (b.seconds <= 1e-6 * a.wall_time_s) continue;
    const int filled = static_cast<int>(b.fraction * bar_width + 0.5);
    std::string bar;
    for (int i = 0; i < bar_width; ++i) bar += i < filled ? "\u2588" : "\u00b7";
    out << fmt::format("  {:<34} {}{}{} {:>6}  {:>10}  {}{}{}\n", b.label,
                       o.color ? colour_of(b.name) : "", bar, reset, format_percent(b.fraction),
                       format_duration(b.seconds), dim, to_string(b.source), reset);
  }
  stalls_and_fixes(a, bold, reset, width, out);
  if (a.trace) {
    out << fmt::format("\n{}per rank{} (device time per rank, from the profiler traces)\n", bold,
                       reset);
    for (const auto& l : trace_table(a))
      out << (display_width(l) + 2 <= width ? "  " + l + '\n' : wrap(l, width, "  ", "    "));
  }
  const auto fw = framework_lines(a);
  if (!fw.empty()) {
    out << fmt::format("\n{}framework's own count{}\n", bold, reset);
    for (const auto& l : fw) out << wrap(l, width, "  ", "    ");
  }
  out << fmt::format("\n{}inputs{}\n", bold, reset);
  // The value column is as wide as its longest value, so a long one ("12 layers, hidden 768,
  // 12 heads") never runs into its source.
  std::size_t value_width = 22;
  for (const auto& u : a.used) value_width = std::max(value_width, u.value.size());
  for (const auto& u : a.used)
    out << fmt::format("  {:<16} {:<{}} {}{}{}\n", u.name, u.value, value_width, dim, u.source,
                       reset);
  if (known(a.model_flops_per_token))
    out << fmt::format("  {:<16} {:<{}} {}{} convention{}\n", "FLOPs/token",
                       format_flops(a.model_flops_per_token), value_width, dim, a.convention,
                       reset);
  if (!a.unknowns.empty()) {
    out << fmt::format("\n{}not known{} (the report gives what it can)\n", bold, reset);
    for (const auto& u : a.unknowns) out << wrap(u, width, "  - ", "    ");
  }
  if (!a.warnings.empty()) {
    out << fmt::format("\n{}warnings{}\n", bold, reset);
    for (const auto& w : a.warnings) out << wrap(w, width, "  - ", "    ");
  }
}

}  // namespace mfu::detail
