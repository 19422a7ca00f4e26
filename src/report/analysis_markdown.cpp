// Markdown report for CI step summaries and pull-request comments.
#include <fmt/format.h>

#include "mfu/units.hpp"
#include "report/analysis_common.hpp"
#include "report/markup.hpp"

namespace mfu::detail {

void render_analysis_markdown(const Analysis& a, std::ostream& out) {
  // Text that can come from a log (names, warnings) is escaped: it cannot end a table row,
  // open a heading or carry raw HTML into a step summary.
  const auto md = [](std::string_view s) { return escape_markdown(s); };
  out << "## mfu: " << md(headline(a)) << "\n\n";
  if (!a.framework_disagreement.empty()) out << "> " << md(a.framework_disagreement) << "\n\n";
  out << "| metric | value |\n|---|---|\n";
  out << fmt::format("| MFU (whole run) | {} |\n", pct_or(a.mfu));
  out << fmt::format("| MFU (steady state) | {} |\n", pct_or(a.mfu_steady));
  if (a.hfu) out << fmt::format("| HFU | {} |\n", format_percent(*a.hfu));
  if (a.achieved_flops_per_s_per_gpu)
    out << fmt::format("| achieved per GPU | {} |\n",
                       format_flop_rate(*a.achieved_flops_per_s_per_gpu));
  if (known(a.peak_flops_per_gpu))
    out << fmt::format("| peak per GPU | {} ({}) |\n", format_flop_rate(a.peak_flops_per_gpu),
                       md(a.gpu));
  if (a.tokens_per_s) out << fmt::format("| tokens/s | {} |\n", format_count(*a.tokens_per_s));
  if (a.tokens_per_s_per_gpu)
    out << fmt::format("| tokens/s per GPU | {} |\n", format_count(*a.tokens_per_s_per_gpu));
  if (a.per_gpu) out << "| GPU count | unknown: MFU is per GPU, from the log's per-GPU rate |\n";
  out << fmt::format("| step time (median) | {} |\n", format_duration(a.step_time.median));
  out << fmt::format("| wall time | {} |\n", format_duration(a.wall_time_s));
  if (a.goodput) out << fmt::format("| goodput | {} |\n", format_percent(*a.goodput));
  out << "\n### Where the time went\n\n| bucket | share | time | known as |\n|---|---:|---:|---|\n";
  for (const auto& b : a.buckets) {
    if (b.seconds <= 0) continue;
    out << fmt::format("| {} | {} | {} | {} |\n", b.label, format_percent(b.fraction),
                       format_duration(b.seconds), to_string(b.source));
  }
  if (!a.fixes.empty()) {
    out << "\n### Fix first\n\n";
    int k = 1;
    for (const auto& f : a.fixes)
      out << fmt::format(
          "{}. **{}** ({}{}): {}\n", k++, f.label, format_duration(f.seconds),
          f.mfu_gain > 0 ? fmt::format(", +{:.1f} MFU points", f.mfu_gain * 100) : "",
          md(f.advice));
  }
  if (!a.attribution_hint.empty()) out << "\n" << md(a.attribution_hint) << "\n";
  if (a.stalls.count > 0)
    out << fmt::format(
        "\n{} stalled records cost {}{}.\n", a.stalls.count, format_duration(a.stalls.excess_s),
        a.stalls.period_steps ? fmt::format(", recurring every {} steps", *a.stalls.period_steps)
                              : "");
  if (a.trace) {
    const TraceTable t = trace_rows(a);
    out << "\n### Per rank\n\n";
    auto table = [&](const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& rows) {
      if (header.empty()) return;
      std::string rule;
      for (const auto& h : header) {
        out << "| " << md(h) << ' ';
        rule += "|---:";
      }
      out << "|\n" << rule << "|\n";
      for (const auto& r : rows) {
        for (const auto& c : r) out << "| " << md(c) << ' ';
        out << "|\n";
      }
      out << '\n';
    };
    table(t.header, t.rows);
    if (!t.step_rows.empty()) {
      out << (t.step_note.empty() ? std::string("Per step:")
                                  : fmt::format("Per step ({}):", md(t.step_note)))
          << "\n\n";
      table(t.step_header, t.step_rows);
    }
    for (const auto& n : t.notes) out << md(n) << "\n\n";
  }
  for (const auto& l : framework_lines(a)) out << "\n> " << md(l) << '\n';
  if (!a.unknowns.empty()) {
    out << "\n<details><summary>not known</summary>\n\n";
    for (const auto& u : a.unknowns) out << "- " << md(u) << '\n';
    out << "\n</details>\n";
  }
  if (!a.warnings.empty()) {
    out << "\n**Warnings**\n\n";
    for (const auto& w : a.warnings) out << "- " << md(w) << '\n';
  }
}

}  // namespace mfu::detail
