#pragma once
// A column of seconds as logs print them, with a few decimals ("0.304817"): while every value
// written is such a decimal, d / 10^k with d an int32 and one k for the column, the column holds
// d, 2 or 4 bytes a value instead of 8 (src/narrow_column.hpp); the first value that is not turns
// it into a column of doubles for good. A column made with a negative least scale also holds
// counts printed with few significant digits ("2.500439e+16" FLOPs: 2500439 x 10^10, k = -10).
// A column made with a unit u holds values a parser computed as (printed decimal) x u, such as
// "400.9" TFLOP/s times 10^12: d / 10^k x u (4009 / 10 x 10^12), checked the same way. Held
// without the unit, as d x 10^(k-12), many would not come back bit for bit (the product rounds:
// 357 of the 9,000 values 100.0..999.9, counted in tests/unit/test_narrow_column.cpp's way), and
// one is enough to turn the column into doubles.
//
// Reading gives back the very double that was written, bit for bit: each value is checked when
// it is written (d / 10^k computed as a double equals it). That is the common case because
// 10^|k| (|k| <= 22) is exact in a double and IEEE division and multiplication round correctly,
// so d / 10^k is the double nearest the decimal, which is also what a parser's strtod of the
// printed text gives.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

#include "narrow_column.hpp"
#include "record_column.hpp"

namespace mfu::detail {

class DecimalColumn {
 public:
  using value_type = double;
  /// The least scale a column of counts takes: 10^22 is the largest power of ten a double
  /// holds exactly.
  static constexpr int kLeastScale = -22;
  /// min_scale: the least k the column takes (0 for seconds, kLeastScale for counts); unit:
  /// what the decimals were multiplied by (1: the values are the decimals).
  explicit DecimalColumn(int min_scale = 0, double unit = 1)
      : min_scale_(std::max(min_scale, kLeastScale)), unit_(unit), per_unit_(1 / unit) {}
  [[nodiscard]] bool active() const { return digits_.active() || doubles_.active(); }

  [[nodiscard]] double get(std::size_t i) const {
    return narrow_ ? decode(digits_.get(i)) : doubles_.get(i);
  }

  void put(std::size_t i, double v) {
    if (i >= size_) size_ = i + 1;
    if (narrow_) {
      if (std::isnan(v)) {
        digits_.put(i, kMissingDigits);
        return;
      }
      std::int32_t d = 0;
      if (digits_at(v, scale_, d) || (rescale_for(v) && digits_at(v, scale_, d))) {
        digits_.put(i, d);
        const std::int64_t a = d < 0 ? -std::int64_t{d} : d;
        if (a > max_abs_) max_abs_ = a;
        return;
      }
      widen();
    }
    doubles_.put(i, v);
  }

  /// Values [first, first + n) handed to put(k, value) for k = 0..n-1.
  template <class Put>
  void read(std::size_t first, std::size_t n, Put&& put) const {
    if (narrow_)
      digits_.read(first, n, [&](std::size_t k, std::int32_t d) { put(k, decode(d)); });
    else
      doubles_.read(first, n, put);
  }
  /// The value every index of [0, n) holds when the column knows it is one value without
  /// reading them (Column::uniform); nullopt otherwise.
  [[nodiscard]] std::optional<double> uniform(std::size_t n) const {
    if (!narrow_) return doubles_.uniform(n);
    const std::optional<std::int32_t> d = digits_.uniform(n);
    return d ? std::optional<double>(decode(*d)) : std::nullopt;
  }

  [[nodiscard]] std::size_t bytes() const { return digits_.bytes() + doubles_.bytes(); }
  void reserve(std::size_t n) {
    digits_.reserve(n);
    doubles_.reserve(n);
  }
  void shrink_to_fit() {
    digits_.shrink_to_fit();
    doubles_.shrink_to_fit();
  }

  /// The scale k when the column holds its values as digits d (value = d / 10^k): -1 while it
  /// holds none, nullopt once it holds doubles. (Asked of columns of seconds only, min_scale 0.)
  [[nodiscard]] std::optional<int> scale() const {
    if (!narrow_) return std::nullopt;
    return scale_ == kNoScale ? -1 : scale_;
  }
  /// The digits of values [first, first + n) handed to put(k, d) (scale() must have a value);
  /// a missing value's digits are kMissingDigits. Values compare as their digits do.
  template <class Put>
  void read_digits(std::size_t first, std::size_t n, Put&& put) const {
    digits_.read(first, n, put);
  }
  /// What read() gives for digits d at scale k: the very double that was written.
  [[nodiscard]] static double from_digits(std::int32_t d, int k) {
    if (d == kMissingDigits) return std::numeric_limits<double>::quiet_NaN();
    if (k == kNoScale) return static_cast<double>(d);  // no digits are written without a scale
    if (k < 0) return static_cast<double>(d) * kPow10[-k];
    return static_cast<double>(d) / kPow10[k];
  }
  /// A missing value (NaN): no decimal is written this way (|d| < 2^31 - 1).
  static constexpr std::int32_t kMissingDigits = std::numeric_limits<std::int32_t>::min();

 private:
  static constexpr int kMaxScale = 9;
  static constexpr double kPow10[-kLeastScale + 1] = {
      1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  static constexpr int kNoScale = std::numeric_limits<int>::min();  // before the first value

  [[nodiscard]] double decode(std::int32_t d) const {
    const double x = from_digits(d, scale_);
    return unit_ == 1 ? x : x * unit_;
  }
  /// std::llround(x) for |x| < 2^31, inline: the library call was most of a write's cost (five
  /// calls a native record, ~10 ns each). The truncation and the difference are exact there.
  [[nodiscard]] static double nearest_integer(double x) {
    const auto whole = static_cast<double>(static_cast<std::int64_t>(x));
    const double rest = x - whole;
    if (rest >= 0.5) return whole + 1;
    if (rest <= -0.5) return whole - 1;
    return whole;
  }
  /// Whether v is d / 10^k (times the unit) for an int32 d (bit for bit, so -0 is not), and
  /// that d.
  [[nodiscard]] bool digits_at(double v, int k, std::int32_t& d) const {
    if (k == kNoScale) return false;
    const double p = kPow10[k < 0 ? -k : k];
    // Near the decimal (a product with the rounded 1/unit, cheaper than a division): rounding
    // finds its digits, and the check below that they give v back decides.
    const double w = unit_ == 1 ? v : v * per_unit_;
    const double scaled = k < 0 ? w / p : w * p;
    if (!(std::fabs(scaled) < 2147483647.0)) return false;
    const double rounded = nearest_integer(scaled);
    double back = k < 0 ? rounded * p : rounded / p;
    if (unit_ != 1) back *= unit_;
    if (std::bit_cast<std::uint64_t>(back) != std::bit_cast<std::uint64_t>(v)) return false;
    d = static_cast<std::int32_t>(rounded);
    return true;
  }
  [[nodiscard]] bool fits(double v, int k) const {
    std::int32_t d = 0;
    return digits_at(v, k, d);
  }
  /// Moves the column to the smallest scale that holds v, when its digits still fit an int32
  /// there; false when no scale holds v or they would not fit.
  bool rescale_for(double v) {
    int k = scale_ == kNoScale ? min_scale_ : scale_ + 1;
    while (k <= kMaxScale && !fits(v, k)) ++k;
    if (k > kMaxScale) return false;
    if (scale_ == kNoScale || max_abs_ == 0) {  // no digits but zeros: they stay as they are
      scale_ = k;
      return true;
    }
    // A factor of 10^10 or more takes any digit but 0 out of an int32.
    if (k - scale_ > kMaxScale) return false;
    const auto factor = static_cast<std::int64_t>(kPow10[k - scale_]);
    if (max_abs_ * factor >= std::numeric_limits<std::int32_t>::max()) return false;
    for (std::size_t i = 0; i < size_; ++i) {
      const std::int32_t d = digits_.get(i);
      if (d != kMissingDigits) digits_.put(i, static_cast<std::int32_t>(d * factor));
    }
    max_abs_ *= factor;
    scale_ = k;
    return true;
  }
  /// From now on a column of doubles: the values so far move over.
  void widen() {
    for (std::size_t i = 0; i < size_; ++i) {
      const double v = decode(digits_.get(i));
      if (!std::isnan(v) || doubles_.active()) doubles_.put(i, v);
    }
    digits_.clear();
    narrow_ = false;
  }

  NarrowColumn<std::int32_t> digits_{kMissingDigits};
  Column<double> doubles_{std::numeric_limits<double>::quiet_NaN()};
  bool narrow_ = true;
  int min_scale_ = 0;
  double unit_ = 1;
  double per_unit_ = 1;
  int scale_ = kNoScale;  // k
  std::int64_t max_abs_ = 0;
  std::size_t size_ = 0;  // one past the last index written
};

}  // namespace mfu::detail
