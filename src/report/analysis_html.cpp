// A self-contained HTML report: no network, no scripts; inline SVG charts of step time and
// MFU over the run (stalls marked) and the lost-time waterfall.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "mfu/units.hpp"
#include "report/analysis_common.hpp"
#include "report/markup.hpp"

namespace mfu::detail {
namespace {

const char* fill_of(const std::string& b) {
  const auto id = bucket_from_key(b);
  return id ? bucket_info(*id).colour : "#b0b0b0";
}

/// A line chart of one series over the steps. `value` picks the y value of a point.
template <class F>
std::string line_chart(const std::vector<SeriesPoint>& pts, F value, const std::string& title,
                       const std::string& unit, double scale, const std::string& id) {
  const double W = 900, H = 260, L = 70, R = 20, Tp = 30, Bm = 40;
  std::vector<std::pair<double, double>> xy;
  for (const auto& p : pts) {
    const double v = value(p);
    if (std::isfinite(v)) xy.emplace_back(static_cast<double>(p.step), v * scale);
  }
  std::string svg = fmt::format(
      "<svg id=\"{}\" class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\" "
      "xmlns=\"http://www.w3.org/2000/svg\">\n<text x=\"{}\" y=\"18\" class=\"title\">{}</text>\n",
      id, W, H, escape_markup(title), L, escape_markup(title));
  if (xy.empty()) return svg + "<text x=\"100\" y=\"120\">no data</text></svg>\n";
  double x0 = xy.front().first, x1 = xy.front().first, y1 = 0;
  for (auto [x, y] : xy) {
    x0 = std::min(x0, x);
    x1 = std::max(x1, x);
    y1 = std::max(y1, y);
  }
  if (x1 == x0) x1 = x0 + 1;
  if (y1 <= 0) y1 = 1;
  y1 *= 1.08;
  auto X = [&](double x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
  auto Y = [&](double y) { return H - Bm - y / y1 * (H - Tp - Bm); };
  // Axes and ticks.
  svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/>\n", L, H - Bm,
                     W - R, H - Bm);
  svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/>\n", L, Tp, L,
                     H - Bm);
  for (int k = 0; k <= 4; ++k) {
    const double yv = y1 * k / 4.0;
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{}</text>\n",
                       L - 6, Y(yv) + 4, format_number(yv, 3));
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"grid\"/>\n",
                       L, Y(yv), W - R, Y(yv));
    const double xv = x0 + (x1 - x0) * k / 4.0;
    svg +=
        fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n",
                    X(xv), H - Bm + 16, static_cast<long long>(std::llround(xv)));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">step</text>\n",
                     (L + W - R) / 2, H - 6);
  svg += fmt::format(
      "<text x=\"14\" y=\"{}\" class=\"tick\" transform=\"rotate(-90 14 {})\" "
      "text-anchor=\"middle\">{}</text>\n",
      (Tp + H - Bm) / 2, (Tp + H - Bm) / 2, escape_markup(unit));
  std::string path;
  for (auto [x, y] : xy)
    path += fmt::format("{}{:.1f},{:.1f} ", path.empty() ? "M" : "L", X(x), Y(y));
  svg += fmt::format("<path d=\"{}\" class=\"series\"/>\n", path);
  // Stalls and warm-up marked.
  for (const auto& p : pts) {
    const double v = value(p);
    if (!std::isfinite(v) || !(p.stall || p.warmup)) continue;
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" class=\"{}\"><title>step {}: "
        "{}</title></circle>\n",
        X(static_cast<double>(p.step)), Y(v * scale), p.stall ? "stall" : "warm", p.step,
        p.stall ? "stall" : "warm-up");
  }
  return svg + "</svg>\n";
}

std::string waterfall_chart(const Analysis& a) {
  const double W = 900, H = 60 + 26.0 * static_cast<double>(a.buckets.size());
  std::string svg = fmt::format(
      "<svg id=\"waterfall\" class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"lost-time waterfall\" "
      "xmlns=\"http://www.w3.org/2000/svg\">\n<text x=\"10\" y=\"18\" class=\"title\">where the "
      "wall time went</text>\n",
      W, H);
  double acc = 0;
  double y = 34;
  const double L = 230, span = W - L - 120;
  for (const auto& b : a.buckets) {
    const double x = L + acc * span;
    const double w = std::max(0.0, b.fraction * span);
    svg +=
        fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"label\" text-anchor=\"end\">{}</text>\n",
                    L - 8, y + 14, escape_markup(b.label));
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"18\" fill=\"{}\" "
        "class=\"bucket\" "
        "data-bucket=\"{}\"><title>{}: {} ({}, {})</title></rect>\n",
        x, y, w, fill_of(b.name), b.name, escape_markup(b.label), format_duration(b.seconds),
        format_percent(b.fraction), to_string(b.source));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tick\">{}</text>\n",
                       std::min(W - 110, x + w + 6), y + 14, format_percent(b.fraction));
    acc += b.fraction;
    y += 26;
  }
  return svg + "</svg>\n";
}

}  // namespace

void render_analysis_html(const Analysis& a, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>mfu "
         "report</title>\n"
         "<style>\nbody{font-family:system-ui,sans-serif;margin:2em;max-width:960px;color:#222}\n"
         "h1{font-size:1.4em}table{border-collapse:collapse}td,th{padding:3px "
         "10px;border-bottom:1px solid #ddd;"
         "text-align:left}\n.chart{width:100%;height:auto;margin:1em 0;background:#fafafa}\n"
         ".title{font-weight:bold;font-size:14px}.tick,.label{font-size:11px;fill:#444}\n"
         ".axis{stroke:#333}.grid{stroke:#e4e4e4}.series{fill:none;stroke:#1f6fbf;stroke-width:1.5}"
         "\n"
         ".stall{fill:#d04040}.warm{fill:#999}.small{color:#666;font-size:.9em}\n</style></"
         "head><body>\n";
  out << "<h1>" << escape_markup(headline(a)) << "</h1>\n";
  out << "<p class=\"small\">" << escape_markup(a.format) << " log: ";
  for (std::size_t i = 0; i < a.inputs.size(); ++i)
    out << (i ? ", " : "") << escape_markup(a.inputs[i]);
  out << "</p>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v) {
    out << "<tr><th>" << escape_markup(k) << "</th><td>" << escape_markup(v) << "</td></tr>\n";
  };
  row("MFU (whole run)", pct_or(a.mfu));
  row("MFU (steady state)", pct_or(a.mfu_steady));
  if (a.hfu) row("HFU", format_percent(*a.hfu));
  if (a.achieved_flops_per_s_per_gpu)
    row("achieved per GPU", format_flop_rate(*a.achieved_flops_per_s_per_gpu));
  if (known(a.peak_flops_per_gpu))
    row("peak per GPU",
        format_flop_rate(a.peak_flops_per_gpu) + " (" + a.gpu + " " + a.dtype + ")");
  if (a.tokens_per_s) row("tokens/s", format_count(*a.tokens_per_s));
  if (a.tokens_per_s_per_gpu) row("tokens/s per GPU", format_count(*a.tokens_per_s_per_gpu));
  if (a.per_gpu) row("GPU count", "unknown: MFU is per GPU, from the log's per-GPU rate");
  row("step time (median)", format_duration(a.step_time.median));
  row("wall time", format_duration(a.wall_time_s));
  if (a.goodput) row("goodput", format_percent(*a.goodput));
  out << "</table>\n";
  out << line_chart(
      a.series, [](const SeriesPoint& p) { return p.time_s; },
      "step time (red: stalls, grey: warm-up)", "seconds", 1.0, "steptime");
  bool any_mfu = false;
  for (const auto& p : a.series) any_mfu = any_mfu || std::isfinite(p.mfu);
  if (any_mfu)
    out << line_chart(
        a.series, [](const SeriesPoint& p) { return p.mfu; }, "MFU per record", "MFU %", 100.0,
        "mfu");
  out << waterfall_chart(a);
  out << "<h2>Where the time "
         "went</h2>\n<table><tr><th>bucket</th><th>share</th><th>time</th><th>known "
         "as</th><th>made of</th></tr>\n";
  for (const auto& b : a.buckets) {
    if (b.seconds <= 0) continue;
    out << fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"small\">{}</td></tr>\n",
        escape_markup(b.label), format_percent(b.fraction), format_duration(b.seconds),
        to_string(b.source), escape_markup(b.detail));
  }
  out << "</table>\n";
  if (!a.fixes.empty()) {
    out << "<h2>Fix first</h2>\n<ol>\n";
    for (const auto& f : a.fixes)
      out << fmt::format(
          "<li><b>{}</b>: {}{}. {}</li>\n", escape_markup(f.label), format_duration(f.seconds),
          f.mfu_gain > 0 ? fmt::format(" (+{:.1f} MFU points)", f.mfu_gain * 100) : "",
          escape_markup(f.advice));
    out << "</ol>\n";
  }
  if (a.trace) {
    out << "<h2>Per rank</h2>\n<pre>";
    for (const auto& l : trace_table(a)) out << escape_markup(l) << '\n';
    out << "</pre>\n";
  }
  const auto fw = framework_lines(a);
  if (!fw.empty()) {
    out << "<h2>Framework's own count</h2>\n<ul>\n";
    for (const auto& l : fw) out << "<li>" << escape_markup(l) << "</li>\n";
    out << "</ul>\n";
  }
  out << "<h2>Inputs</h2>\n<table>\n";
  for (const auto& u : a.used)
    out << "<tr><td>" << escape_markup(u.name) << "</td><td>" << escape_markup(u.value)
        << "</td><td class=\"small\">" << escape_markup(u.source) << "</td></tr>\n";
  out << "</table>\n";
  if (!a.unknowns.empty() || !a.warnings.empty()) {
    out << "<h2>Notes</h2>\n<ul>\n";
    for (const auto& u : a.unknowns) out << "<li>not known: " << escape_markup(u) << "</li>\n";
    for (const auto& w : a.warnings) out << "<li>warning: " << escape_markup(w) << "</li>\n";
    out << "</ul>\n";
  }
  out << "<p class=\"small\">generated by mfu</p>\n</body></html>\n";
}

}  // namespace mfu::detail
