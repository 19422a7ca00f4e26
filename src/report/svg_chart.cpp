// Plot frames, ticks and shapes for the HTML reports' inline SVG.
#include "report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/markup.hpp"

namespace mfu::detail {
namespace {

/// The round number near `x`: 1, 2, 5 or 10 times a power of ten (Heckbert's nicenum).
double nice_number(double x, bool round) {
  const double e = std::floor(std::log10(x));
  const double f = x / std::pow(10.0, e);
  double n = 10;
  if (round)
    n = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  else
    n = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return n * std::pow(10.0, e);
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target, bool integer) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) hi = lo + (integer ? 1.0 : std::max(1.0, std::abs(lo)) * 0.1);
  const double range = nice_number(hi - lo, false);
  double d = nice_number(range / std::max(1, target - 1), true);
  if (integer) d = std::max(1.0, std::round(d));
  std::vector<double> ticks;
  const double first = std::floor(lo / d) * d, last = std::ceil(hi / d) * d;
  for (double v = first; v <= last + d * 0.5 && ticks.size() < 64; v += d)
    ticks.push_back(std::abs(v) < d * 1e-9 ? 0.0 : v);
  return ticks;
}

std::string tick_label(double value, double spacing) {
  if (value == 0) return "0";
  const double big = std::max(std::abs(value), std::abs(spacing));
  double scale = 1;
  const char* suffix = "";
  if (big >= 1e9) {
    scale = 1e9;
    suffix = "G";
  } else if (big >= 1e6) {
    scale = 1e6;
    suffix = "M";
  } else if (big >= 1e4) {
    scale = 1e3;
    suffix = "k";
  }
  const double d = spacing / scale;
  const int decimals =
      d > 0 ? std::clamp(static_cast<int>(std::ceil(-std::log10(d) - 1e-9)), 0, 9) : 0;
  return fmt::format("{:.{}f}{}", value / scale, decimals, suffix);
}

std::vector<double> running_median(const std::vector<double>& y, std::size_t window) {
  const std::size_t half = window / 2;
  std::vector<double> out(y.size(), std::nan(""));
  std::vector<double> w;
  for (std::size_t i = 0; i < y.size(); ++i) {
    w.clear();
    for (std::size_t j = i > half ? i - half : 0; j < std::min(y.size(), i + half + 1); ++j)
      if (std::isfinite(y[j])) w.push_back(y[j]);
    if (w.empty() || !std::isfinite(y[i])) continue;
    // The lower median: at the ends, where the window is cut short, one spike is not taken.
    auto mid = w.begin() + static_cast<std::ptrdiff_t>((w.size() - 1) / 2);
    std::nth_element(w.begin(), mid, w.end());
    out[i] = *mid;
  }
  return out;
}

ChartFrame::ChartFrame(double x_lo, double x_hi, double y_hi, bool integer_x, double height)
    : height_(height), x_lo_(x_lo), x_hi_(x_hi) {
  if (!(x_hi_ > x_lo_)) x_hi_ = x_lo_ + 1;
  if (!(y_hi > 0) || !std::isfinite(y_hi)) y_hi = 1;
  y_ticks_ = nice_ticks(0, y_hi, 5);
  y_hi_ = y_ticks_.empty() ? y_hi : y_ticks_.back();
  for (double t : nice_ticks(x_lo_, x_hi_, 6, integer_x))
    if (t >= x_lo_ - 1e-9 && t <= x_hi_ + 1e-9) x_ticks_.push_back(t);
}

double ChartFrame::x(double v) const {
  return left_ + (v - x_lo_) / (x_hi_ - x_lo_) * (right() - left_);
}

double ChartFrame::y(double v) const {
  return bottom() - std::clamp(v / y_hi_, 0.0, 1.05) * (bottom() - top_);
}

std::string ChartFrame::open(const std::string& id, const std::string& title) const {
  return fmt::format(
      "<svg id=\"{}\" class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\" "
      "xmlns=\"http://www.w3.org/2000/svg\">\n<text x=\"{}\" y=\"18\" class=\"title\">{}</text>\n",
      id, width_, height_, escape_markup(title), left_, escape_markup(title));
}

std::string ChartFrame::axes(const std::string& x_name, const std::string& y_name) const {
  std::string s = fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/>\n"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/>\n",
      left_, bottom(), right(), bottom(), left_, top_, left_, bottom());
  const double dy = y_ticks_.size() > 1 ? y_ticks_[1] - y_ticks_[0] : 1;
  for (double t : y_ticks_)
    s += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"grid\"/>\n"
        "<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{}</text>\n",
        left_, y(t), right(), y(t), left_ - 6, y(t) + 4, tick_label(t, dy));
  const double dx = x_ticks_.size() > 1 ? x_ticks_[1] - x_ticks_[0] : 1;
  for (double t : x_ticks_)
    s +=
        fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n",
                    x(t), bottom() + 16, tick_label(t, dx));
  const double mid_y = (top_ + bottom()) / 2;
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n"
      "<text x=\"14\" y=\"{}\" class=\"tick\" transform=\"rotate(-90 14 {})\" "
      "text-anchor=\"middle\">{}</text>\n",
      (left_ + right()) / 2, height_ - 6, escape_markup(x_name), mid_y, mid_y,
      escape_markup(y_name));
  return s;
}

std::string ChartFrame::line(const Points& pts, const std::string& css_class) const {
  std::string d;
  bool pen_down = false;
  for (auto [px, py] : pts) {
    if (!std::isfinite(py)) {
      pen_down = false;
      continue;
    }
    d += fmt::format("{}{:.1f},{:.1f} ", pen_down ? "L" : "M", x(px), y(py));
    pen_down = true;
  }
  if (d.empty()) return {};
  return fmt::format("<path d=\"{}\" class=\"{}\"/>\n", d, css_class);
}

std::string ChartFrame::area(const Points& lower, const Points& upper,
                             const std::string& fill) const {
  if (upper.empty() || upper.size() != lower.size()) return {};
  std::string d;
  for (auto [px, py] : upper)
    d += fmt::format("{}{:.1f},{:.1f} ", d.empty() ? "M" : "L", x(px), y(py));
  for (auto it = lower.rbegin(); it != lower.rend(); ++it)
    d += fmt::format("L{:.1f},{:.1f} ", x(it->first), y(it->second));
  return fmt::format("<path d=\"{}Z\" fill=\"{}\" class=\"layer\"/>\n", d, fill);
}

std::string ChartFrame::band(double x_lo, double x_hi, const std::string& css_class,
                             double min_px) const {
  const double a = x(x_lo), b = x(x_hi);
  const double w = std::max(min_px, b - a);
  return fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" class=\"{}\"/>\n",
                     std::max(left_, (a + b) / 2 - w / 2), top_, w, bottom() - top_, css_class);
}

std::string ChartFrame::hline(double v, const std::string& css_class,
                              const std::string& label) const {
  return fmt::format(
      "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"{}\"/>\n"
      "<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{}</text>\n",
      left_, y(v), right(), y(v), css_class, right(), y(v) - 4, escape_markup(label));
}

std::string svg_legend(const std::vector<std::pair<std::string, std::string>>& items, double x,
                       double y) {
  std::string s;
  for (const auto& [label, colour] : items) {
    s += fmt::format(
        "<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"10\" height=\"10\" fill=\"{}\"/>"
        "<text x=\"{:.0f}\" y=\"{:.0f}\" class=\"tick\">{}</text>\n",
        x, y - 9, colour, x + 14, y, escape_markup(label));
    x += 26 + 7.5 * static_cast<double>(label.size());
  }
  return s;
}

}  // namespace mfu::detail
