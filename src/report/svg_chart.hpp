#pragma once
// Inline SVG charts for the HTML reports: a plot frame with round ticks, lines, stacked areas,
// bars and markers. No scripts and no network: the page is one self-contained file.

#include <string>
#include <utility>
#include <vector>

namespace mfu::detail {

/// Round tick values (1, 2 or 5 x 10^k apart) that cover [lo, hi] with about `target` ticks
/// (Heckbert, "Nice numbers for graph labels", Graphics Gems, 1990). With `integer`, the
/// spacing is at least 1 and whole, so a step axis never repeats a label.
[[nodiscard]] std::vector<double> nice_ticks(double lo, double hi, int target,
                                             bool integer = false);

/// A tick's label with as many decimals as the spacing needs; k from 10,000, M from a
/// million, G from a billion.
[[nodiscard]] std::string tick_label(double value, double spacing);

/// Centred running median over `window` points (odd; NaN points skipped): a smoothed series
/// that a few slow steps do not drag up.
[[nodiscard]] std::vector<double> running_median(const std::vector<double>& y, std::size_t window);

using Points = std::vector<std::pair<double, double>>;

/// One plot: data ranges mapped onto an SVG canvas with margins.
class ChartFrame {
 public:
  /// x from x_lo to x_hi (whole steps when `integer_x`), y from 0 to the first round tick at
  /// or above y_hi.
  ChartFrame(double x_lo, double x_hi, double y_hi, bool integer_x, double height = 260);

  [[nodiscard]] double x(double v) const;
  [[nodiscard]] double y(double v) const;
  [[nodiscard]] double top() const { return top_; }
  [[nodiscard]] double bottom() const { return height_ - bottom_; }
  [[nodiscard]] double left() const { return left_; }
  [[nodiscard]] double right() const { return width_ - right_; }

  /// `<svg ...>` with the title; close with "</svg>\n".
  [[nodiscard]] std::string open(const std::string& id, const std::string& title) const;
  /// Axes, grid lines and tick labels, the axis names under and beside them.
  [[nodiscard]] std::string axes(const std::string& x_name, const std::string& y_name) const;
  /// A polyline through the points (breaks where y is NaN) with a CSS class.
  [[nodiscard]] std::string line(const Points& pts, const std::string& css_class) const;
  /// A band filled between `lower` and `upper` (same x values).
  [[nodiscard]] std::string area(const Points& lower, const Points& upper,
                                 const std::string& fill) const;
  /// A full-height band from x_lo to x_hi (at least `min_px` wide).
  [[nodiscard]] std::string band(double x_lo, double x_hi, const std::string& css_class,
                                 double min_px = 1.5) const;
  /// A horizontal line at y with a label at its right end.
  [[nodiscard]] std::string hline(double v, const std::string& css_class,
                                  const std::string& label) const;

  static constexpr double kWidth = 900;

 private:
  double width_ = kWidth, height_, left_ = 70, right_ = 20, top_ = 48, bottom_ = 40;
  double x_lo_, x_hi_, y_hi_;
  std::vector<double> x_ticks_, y_ticks_;
};

/// A row of coloured legend entries under the title.
[[nodiscard]] std::string svg_legend(const std::vector<std::pair<std::string, std::string>>& items,
                                     double x, double y);

}  // namespace mfu::detail
