// The charts of the HTML report: step time (stalls and warm-up marked, a baseline's median),
// MFU and tokens/s smoothed over the raw values, the timed phases stacked, a histogram of the
// steady step times, and the lost-time waterfall.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "analysis/stats.hpp"
#include "mfu/units.hpp"
#include "report/analysis_common.hpp"
#include "report/html_parts.hpp"
#include "report/markup.hpp"
#include "report/svg_chart.hpp"

namespace mfu::detail {
namespace {

template <class F>
Points series_of(const Analysis& a, F value) {
  Points pts;
  for (const auto& p : a.series) {
    const double v = value(p);
    if (std::isfinite(v)) pts.emplace_back(static_cast<double>(p.step), v);
  }
  return pts;
}

/// A smoothing window of about a 25th of the points (odd, 1 to 51).
std::size_t smoothing_window(std::size_t n) {
  return std::clamp<std::size_t>(n / 25, 1, 51) | 1;
}

/// The raw series faint, its running median over it.
std::string raw_and_smoothed(const ChartFrame& f, const Points& raw) {
  std::vector<double> y;
  for (const auto& p : raw) y.push_back(p.second);
  const auto s = running_median(y, smoothing_window(raw.size()));
  Points smooth;
  for (std::size_t i = 0; i < raw.size(); ++i) smooth.emplace_back(raw[i].first, s[i]);
  return f.line(raw, "raw") + f.line(smooth, "series");
}

/// A chart of one quantity over the steps, raw and smoothed.
std::string smoothed_chart(const Points& raw, const std::string& id, const std::string& title,
                           const std::string& y_name, double y_cap) {
  if (raw.size() < 2) return {};
  double y_hi = 0;
  for (const auto& p : raw) y_hi = std::max(y_hi, p.second);
  const ChartFrame f(raw.front().first, raw.back().first, std::min(y_hi, y_cap), true);
  return f.open(id, title) + f.axes("step", y_name) + raw_and_smoothed(f, raw) +
         svg_legend({{"raw", "#9bbfe3"}, {"running median", "#1f6fbf"}}, f.left() + 4, 38) +
         "</svg>\n";
}

const char* phase_colour(Phase p) {
  switch (p) {
    case Phase::kForward: return "#2e9e44";
    case Phase::kBackward: return "#7cc68a";
    case Phase::kForwardBackward: return "#4fb063";
    case Phase::kOptimizer: return "#e0b000";
    case Phase::kComm: return "#a040c0";
    case Phase::kData: return "#20a0c0";
    case Phase::kGenerate: return "#c07020";
    case Phase::kOther: return "#6080a0";
    case Phase::kCompute: return "#2e9e44";
    case Phase::kIdle: return "#d04040";
  }
  return "#b0b0b0";
}

}  // namespace

std::string step_time_chart(const Analysis& a, const BaselineOverlay& base) {
  const Points pts = series_of(a, [](const SeriesPoint& p) { return p.time_s; });
  if (pts.empty()) return {};
  std::vector<double> t;
  for (const auto& p : pts) t.push_back(p.second);
  // A few very slow steps (an evaluation, a checkpoint) would flatten every other step onto
  // the axis: the scale stops at 3 x p95 and slower steps are drawn on the top edge.
  const double y_max = *std::max_element(t.begin(), t.end());
  const double y_cap =
      std::max(3 * quantile_of(t, 0.95), std::isfinite(base.median_s) ? 1.2 * base.median_s : 0.0);
  const bool clipped = y_max > y_cap;
  std::string title = "step time";
  if (clipped)
    title += fmt::format(" (steps slower than {} drawn on the top edge)", format_duration(y_cap));
  const ChartFrame f(pts.front().first, std::max(pts.back().first, pts.front().first + 1),
                     clipped ? y_cap : y_max, true);
  std::string svg = f.open("steptime", title) + f.axes("step", "seconds per iteration");
  double warm_lo = kUnknown, warm_hi = kUnknown;
  std::set<std::int64_t> worst;
  for (const auto& s : a.stalls.worst) worst.insert(s.step);
  std::string stall_bands;
  for (const auto& p : a.series) {
    if (p.warmup) {
      warm_lo = std::isfinite(warm_lo) ? std::min(warm_lo, double(p.step)) : double(p.step);
      warm_hi = std::isfinite(warm_hi) ? std::max(warm_hi, double(p.step)) : double(p.step);
    }
    // The worst stalls get a marker each; the rest are shaded, so hundreds of them do not
    // cover the line.
    if (p.stall && !worst.count(p.step))
      stall_bands += f.band(double(p.step), double(p.step), "stallband");
  }
  if (std::isfinite(warm_lo)) svg += f.band(warm_lo, warm_hi, "warmband");
  svg += stall_bands + f.line(pts, "series");
  if (std::isfinite(base.median_s))
    svg += f.hline(base.median_s, "baseline",
                   fmt::format("{} median {}", base.label, format_duration(base.median_s)));
  for (const auto& s : a.stalls.worst) {
    const char* at = s.cause == "checkpoint" ? ", at a checkpoint"
                     : s.cause == "eval"     ? ", at an evaluation"
                                             : "";
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" class=\"stall\"><title>step {}: {} "
        "(+{}){}</title></circle>\n",
        f.x(double(s.step)), f.y(s.time_s), s.step, format_duration(s.time_s),
        format_duration(s.excess_s), at);
  }
  std::vector<std::pair<std::string, std::string>> legend{{"step time", "#1f6fbf"}};
  if (!a.stalls.worst.empty()) legend.emplace_back("worst stalls", "#d04040");
  if (!stall_bands.empty()) legend.emplace_back("other stalls", "#f0b0b0");
  if (std::isfinite(warm_lo)) legend.emplace_back("warm-up", "#d8d8d8");
  if (std::isfinite(base.median_s)) legend.emplace_back(base.label + " median", "#e07000");
  return svg + svg_legend(legend, f.left() + 4, 38) + "</svg>\n";
}

std::string mfu_chart(const Analysis& a) {
  return smoothed_chart(series_of(a, [](const SeriesPoint& p) { return p.mfu * 100; }), "mfu",
                        "MFU per record", "MFU %", 100.0);
}

std::string tokens_chart(const Analysis& a) {
  return smoothed_chart(series_of(a, [](const SeriesPoint& p) { return p.tokens_per_s; }), "tokens",
                        a.per_gpu ? "tokens/s per GPU" : "tokens/s (all GPUs)", "tokens/s", 1e300);
}

std::string phase_chart(const Analysis& a) {
  std::array<bool, kPhaseCount> present{};
  bool any = false;
  for (const auto& p : a.series)
    for (std::size_t k = 0; k < kPhaseCount; ++k)
      if (std::isfinite(p.phase[k]) && p.phase[k] > 0) present[k] = any = true;
  if (!any || a.series.size() < 2) return {};
  std::vector<Points> tops(kPhaseCount + 1);
  Points base;
  double y_hi = 0;
  for (const auto& p : a.series) {
    if (!std::isfinite(p.time_s)) continue;
    const double x = double(p.step);
    double acc = 0;
    base.emplace_back(x, 0);
    for (std::size_t k = 0; k < kPhaseCount; ++k) {
      if (present[k] && std::isfinite(p.phase[k])) acc += std::max(0.0, p.phase[k]);
      tops[k].emplace_back(x, acc);
    }
    acc = std::max(acc, p.time_s);  // the rest of the step: timed by nothing
    tops[kPhaseCount].emplace_back(x, acc);
    y_hi = std::max(y_hi, acc);
  }
  if (base.size() < 2) return {};
  const ChartFrame f(base.front().first, base.back().first, y_hi, true);
  std::string svg =
      f.open("phases", "timed phases per step, stacked") + f.axes("step", "seconds per iteration");
  std::vector<std::pair<std::string, std::string>> legend;
  const Points* below = &base;
  for (std::size_t k = 0; k < kPhaseCount; ++k) {
    if (!present[k]) continue;
    const auto ph = static_cast<Phase>(k);
    svg += f.area(*below, tops[k], phase_colour(ph));
    legend.emplace_back(to_string(ph), phase_colour(ph));
    below = &tops[k];
  }
  svg += f.area(*below, tops[kPhaseCount], "#e4e4e4");
  legend.emplace_back("not timed", "#e4e4e4");
  return svg + svg_legend(legend, f.left() + 4, 38) + "</svg>\n";
}

std::string step_histogram(const Analysis& a, const BaselineOverlay& base) {
  const auto& v = a.steady_step_times_s;
  if (v.size() < 5) return {};
  std::vector<double> all = v;
  all.insert(all.end(), base.step_times_s.begin(), base.step_times_s.end());
  const double lo = *std::min_element(all.begin(), all.end());
  double hi = quantile_of(all, 0.99);
  if (!(hi > lo)) hi = lo * 1.01 + 1e-9;
  const std::size_t bins = std::clamp<std::size_t>(
      static_cast<std::size_t>(std::sqrt(static_cast<double>(v.size()))), 10, 40);
  const double width = (hi - lo) / static_cast<double>(bins);
  // Shares of each sample's steps per bin, so samples of different sizes compare.
  auto shares = [&](const std::vector<double>& s) {
    std::vector<double> h(bins, 0);
    for (double t : s) {
      const auto b = static_cast<std::size_t>(std::max(0.0, (t - lo) / width));
      h[std::min(bins - 1, b)] += 100.0 / static_cast<double>(s.size());
    }
    return h;
  };
  const auto h = shares(v);
  const auto hb = base.step_times_s.empty() ? std::vector<double>{} : shares(base.step_times_s);
  double y_hi = *std::max_element(h.begin(), h.end());
  if (!hb.empty()) y_hi = std::max(y_hi, *std::max_element(hb.begin(), hb.end()));
  const ChartFrame f(lo, hi, y_hi, false);
  std::string svg = f.open("histogram", "steady step times (the slowest 1% in the last bar)") +
                    f.axes("seconds per iteration", "% of steady steps");
  for (std::size_t b = 0; b < bins; ++b) {
    const double x0 = f.x(lo + width * double(b)), x1 = f.x(lo + width * double(b + 1));
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" class=\"bar\">"
        "<title>{} to {}: {:.1f}%</title></rect>\n",
        x0 + 0.5, f.y(h[b]), std::max(0.5, x1 - x0 - 1), f.bottom() - f.y(h[b]),
        format_duration(lo + width * double(b)), format_duration(lo + width * double(b + 1)), h[b]);
  }
  std::vector<std::pair<std::string, std::string>> legend{{"this run", "#1f6fbf"}};
  if (!hb.empty()) {
    Points outline;
    for (std::size_t b = 0; b < bins; ++b) {
      outline.emplace_back(lo + width * double(b), hb[b]);
      outline.emplace_back(lo + width * double(b + 1), hb[b]);
    }
    svg += f.line(outline, "baseline");
    legend.emplace_back(base.label, "#e07000");
  }
  return svg + svg_legend(legend, f.left() + 4, 38) + "</svg>\n";
}

std::string waterfall_chart(const Analysis& a) {
  const double W = ChartFrame::kWidth, H = 60 + 26.0 * static_cast<double>(a.buckets.size());
  std::string svg = fmt::format(
      "<svg id=\"waterfall\" class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"lost-time waterfall\" xmlns=\"http://www.w3.org/2000/svg\">\n"
      "<text x=\"10\" y=\"18\" class=\"title\">where the wall time went</text>\n",
      W, H);
  double acc = 0, y = 34;
  const double L = 230, span = W - L - 120;
  for (const auto& b : a.buckets) {
    const auto id = bucket_from_key(b.name);
    const double x = L + acc * span, w = std::max(0.0, b.fraction * span);
    svg += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" class=\"label\" text-anchor=\"end\">{}</text>\n"
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"18\" fill=\"{}\" "
        "class=\"bucket\" data-bucket=\"{}\"><title>{}: {} ({}, {})</title></rect>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tick\">{}</text>\n",
        L - 8, y + 14, escape_markup(b.label), x, y, w, id ? bucket_info(*id).colour : "#b0b0b0",
        b.name, escape_markup(b.label), format_duration(b.seconds), format_percent(b.fraction),
        to_string(b.source), std::min(W - 110, x + w + 6), y + 14, format_percent(b.fraction));
    acc += b.fraction;
    y += 26;
  }
  return svg + "</svg>\n";
}

}  // namespace mfu::detail
