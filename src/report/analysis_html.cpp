// A self-contained HTML report: no network, no scripts; a summary table, inline SVG charts
// (step time, MFU, tokens/s, timed phases, a step-time histogram, the waterfall) and the
// tables of the text report. Laid out to fit from phone to desktop widths without scrolling
// sideways (the test renders it in headless Chromium at 800 and 1400 pixels).
#include <fmt/format.h>

#include <cmath>

#include "mfu/units.hpp"
#include "mfu/version.hpp"
#include "report/analysis_common.hpp"
#include "report/html_parts.hpp"
#include "report/markup.hpp"

namespace mfu::detail {
namespace {

constexpr const char* kStyle =
    "body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em 1.5em;max-width:960px;"
    "color:#222}\n"
    "h1{font-size:1.35em}h2{font-size:1.1em;margin-top:1.6em}\n"
    "table{border-collapse:collapse;max-width:100%}\n"
    "td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top;"
    "overflow-wrap:break-word}\n"
    "td.small,code{overflow-wrap:anywhere}\n"
    "td.num,th.num{text-align:right;white-space:nowrap}\n"
    ".wide{overflow-x:auto;max-width:100%}\n"
    ".chart{width:100%;height:auto;margin:.6em 0;background:#fafafa}\n"
    ".title{font-weight:bold;font-size:14px}.tick,.label{font-size:11px;fill:#444}\n"
    ".axis{stroke:#333}.grid{stroke:#e4e4e4}\n"
    ".series{fill:none;stroke:#1f6fbf;stroke-width:1.6}"
    ".raw{fill:none;stroke:#9bbfe3;stroke-width:1}\n"
    ".baseline{fill:none;stroke:#e07000;stroke-width:1.5;stroke-dasharray:5 3}\n"
    ".stall{fill:#d04040}.stallband{fill:#f0b0b0;opacity:.6}.warmband{fill:#d8d8d8;opacity:.6}\n"
    ".bar{fill:#1f6fbf;opacity:.8}.layer{stroke:none}\n"
    ".small{color:#666;font-size:.9em}"
    "footer{margin-top:2em;border-top:1px solid #ddd;padding-top:.5em}\n";

void summary_row(std::ostream& out, const std::string& k, const std::string& v) {
  out << "<tr><th>" << escape_markup(k) << "</th>" << cell(v) << "</tr>\n";
}

void summary_table(const Analysis& a, std::ostream& out) {
  out << "<table id=\"summary\">\n";
  summary_row(out, "MFU (whole run)", pct_or(a.mfu));
  summary_row(out, "MFU (steady state)", pct_or(a.mfu_steady));
  if (a.hfu) summary_row(out, "HFU", format_percent(*a.hfu));
  if (a.achieved_flops_per_s_per_gpu)
    summary_row(out, "achieved per GPU", format_flop_rate(*a.achieved_flops_per_s_per_gpu));
  if (known(a.peak_flops_per_gpu))
    summary_row(
        out, "peak per GPU",
        fmt::format("{} ({} {}, dense)", format_flop_rate(a.peak_flops_per_gpu), a.gpu, a.dtype));
  if (known(a.model_flops_per_token))
    summary_row(
        out, "FLOPs per token",
        fmt::format("{} ({} convention)", format_flops(a.model_flops_per_token), a.convention));
  if (a.tokens_per_s) summary_row(out, "tokens/s", format_count(*a.tokens_per_s));
  if (a.tokens_per_s_per_gpu)
    summary_row(out, "tokens/s per GPU", format_count(*a.tokens_per_s_per_gpu));
  if (a.per_gpu) summary_row(out, "GPU count", "unknown: MFU is per GPU, from the log's rate");
  summary_row(out, "step time",
              fmt::format("{} median (p05 {}, p95 {})", format_duration(a.step_time.median),
                          format_duration(a.step_time.p05), format_duration(a.step_time.p95)));
  summary_row(out, "iterations",
              fmt::format("{}: {} steady, {} warm-up", format_count(double(a.iterations_total)),
                          format_count(double(a.iterations_analyzed)),
                          format_count(double(a.warmup_iterations))));
  summary_row(out, "wall time",
              a.clock_source.empty()
                  ? format_duration(a.wall_time_s)
                  : fmt::format("{} (from {})", format_duration(a.wall_time_s), a.clock_source));
  if (known(a.gpus))
    summary_row(out, "GPU time",
                fmt::format("{} on {}", format_gpu_time(a.gpu_hours), count_of(a.gpus, "GPU")));
  if (a.total_energy_kwh)
    summary_row(out, "energy", format_figure(*a.total_energy_kwh) + " kWh at TDP");
  if (a.total_cost) summary_row(out, "cost", format_money(*a.total_cost));
  if (a.goodput)
    summary_row(out, "goodput",
                fmt::format("{} ({}, {} redone)", format_percent(*a.goodput),
                            count_of(double(a.restarts), "restart"),
                            count_of(double(a.steps_lost), "step")));
  out << "</table>\n";
}

void bucket_table(const Analysis& a, std::ostream& out) {
  out << "<div class=\"wide\"><table id=\"buckets\"><tr><th>bucket</th><th class=\"num\">share"
         "</th><th class=\"num\">time</th><th class=\"num\">GPU time</th><th>known as</th>"
         "<th>made of</th></tr>\n";
  for (const auto& b : a.buckets) {
    if (b.seconds <= 0) continue;
    out << "<tr>" << cell(b.label) << cell(format_percent(b.fraction), true)
        << cell(format_duration(b.seconds), true)
        << cell(known(a.gpus) ? format_gpu_time(b.gpu_hours) : "-", true)
        << cell(to_string(b.source)) << "<td class=\"small\">" << escape_markup(b.detail)
        << "</td></tr>\n";
  }
  out << "</table></div>\n";
}

void stall_section(const Analysis& a, std::ostream& out) {
  if (a.stalls.count == 0) return;
  out << "<h2>Stalls</h2>\n<p>"
      << escape_markup(fmt::format(
             "{} slower than {} (median + 3 sigma, sigma = 1.4826 MAD) cost {}",
             count_of(double(a.stalls.count), "record"), format_duration(a.stalls.threshold_s),
             format_duration(a.stalls.excess_s)));
  if (a.stalls.period_steps)
    out << escape_markup(fmt::format("; they recur every {} steps{}", *a.stalls.period_steps,
                                     a.stalls.period_cause.empty()
                                         ? std::string()
                                         : fmt::format(" ({})", a.stalls.period_cause)));
  out << ".</p>\n<table id=\"stalls\"><tr><th class=\"num\">step</th><th class=\"num\">time</th>"
         "<th class=\"num\">above the steady step</th><th>at</th><th class=\"num\">log line</th>"
         "</tr>\n";
  for (const auto& s : a.stalls.worst)
    out << "<tr>" << cell(std::to_string(s.step), true) << cell(format_duration(s.time_s), true)
        << cell(fmt::format("+{}", format_duration(s.excess_s)), true)
        << cell(s.cause.empty() ? "-" : s.cause)
        << cell(s.line ? std::to_string(s.line) : "-", true) << "</tr>\n";
  out << "</table>\n";
}

void fix_section(const Analysis& a, std::ostream& out) {
  if (a.fixes.empty() && a.attribution_hint.empty()) return;
  out << "<h2>Fix first</h2>\n";
  if (!a.fixes.empty()) {
    out << "<ol>\n";
    for (const auto& f : a.fixes)
      out << fmt::format(
          "<li><b>{}</b>: {}{}. {}</li>\n", escape_markup(f.label), format_duration(f.seconds),
          f.mfu_gain > 0 ? fmt::format(" (+{:.1f} MFU points)", f.mfu_gain * 100) : "",
          escape_markup(f.advice));
    out << "</ol>\n";
  }
  if (!a.attribution_hint.empty())
    out << "<p id=\"attribute\">" << escape_markup(a.attribution_hint) << "</p>\n";
}

/// A wide table of numbers: a header row, then one row per entry.
void numeric_table(const char* id, const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  out << "<div class=\"wide\"><table id=\"" << id << "\"><tr>";
  for (const auto& h : header) out << "<th class=\"num\">" << escape_markup(h) << "</th>";
  out << "</tr>\n";
  for (const auto& r : rows) {
    out << "<tr>";
    for (const auto& c : r) out << cell(c, true);
    out << "</tr>\n";
  }
  out << "</table></div>\n";
}

void rank_section(const Analysis& a, std::ostream& out) {
  if (!a.trace) return;
  const TraceTable t = trace_rows(a);
  out << "<h2>Per rank</h2>\n";
  if (!t.header.empty()) {
    numeric_table("ranks", t.header, t.rows, out);
  }
  if (!t.step_rows.empty()) {
    out << "<h3>Per step</h3>\n";
    if (!t.step_note.empty())
      out << "<p class=\"small\">" << escape_markup(t.step_note) << "</p>\n";
    numeric_table("rank_steps", t.step_header, t.step_rows, out);
  }
  for (const auto& n : t.notes) out << "<p class=\"small\">" << escape_markup(n) << "</p>\n";
}

void inputs_and_notes(const Analysis& a, std::ostream& out) {
  const auto fw = framework_lines(a);
  if (!fw.empty()) {
    out << "<h2>Framework's own count</h2>\n<ul>\n";
    for (const auto& l : fw) out << "<li>" << escape_markup(l) << "</li>\n";
    out << "</ul>\n";
  }
  out << "<h2>Inputs</h2>\n<table id=\"inputs\">\n";
  for (const auto& u : a.used)
    out << "<tr>" << cell(u.name) << cell(u.value) << "<td class=\"small\">"
        << escape_markup(u.source) << "</td></tr>\n";
  out << "</table>\n";
  if (a.unknowns.empty() && a.warnings.empty()) return;
  out << "<h2>Notes</h2>\n<ul>\n";
  for (const auto& u : a.unknowns) out << "<li>not known: " << escape_markup(u) << "</li>\n";
  for (const auto& w : a.warnings) out << "<li>warning: " << escape_markup(w) << "</li>\n";
  out << "</ul>\n";
}

}  // namespace

std::string cell(const std::string& text, bool numeric) {
  return fmt::format("<td{}>{}</td>", numeric ? " class=\"num\"" : "", escape_markup(text));
}

void html_open(const std::string& title, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
      << escape_markup(title) << "</title>\n<style>\n"
      << kStyle << "</style></head><body>\n";
}

void analysis_html_body(const Analysis& a, const BaselineOverlay& base, std::ostream& out) {
  out << "<h1>" << escape_markup(headline(a)) << "</h1>\n";
  out << "<p class=\"small\">" << escape_markup(a.format) << " log: ";
  for (std::size_t i = 0; i < a.inputs.size(); ++i)
    out << (i ? ", " : "") << escape_markup(a.inputs[i]);
  out << "</p>\n";
  summary_table(a, out);
  out << step_time_chart(a, base) << mfu_chart(a) << tokens_chart(a) << phase_chart(a)
      << step_histogram(a, base);
  out << "<h2>Where the time went</h2>\n" << waterfall_chart(a);
  bucket_table(a, out);
  stall_section(a, out);
  fix_section(a, out);
  rank_section(a, out);
  inputs_and_notes(a, out);
}

void html_close(const RenderOptions& o, std::ostream& out) {
  out << "<footer class=\"small\">generated by mfu " << MFU_VERSION << " (commit " << MFU_GIT_COMMIT
      << ")";
  if (!o.generated_at.empty()) out << " on " << escape_markup(o.generated_at);
  if (!o.command_line.empty())
    out << "<br>command: <code>" << escape_markup(o.command_line) << "</code>";
  out << "</footer>\n</body></html>\n";
}

void render_analysis_html(const Analysis& a, const RenderOptions& o, std::ostream& out) {
  html_open("mfu report", out);
  analysis_html_body(a, BaselineOverlay{}, out);
  html_close(o, out);
}

}  // namespace mfu::detail
