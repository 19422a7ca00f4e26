#include "analysis/stats.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace mfu::detail {
namespace {

template <class Item>
double value_of(const Item& item) {
  if constexpr (std::is_arithmetic_v<Item>)
    return item;
  else
    return item.value;
}

template <class Item>
bool equal_weights(const std::vector<Item>& v) {
  for (const auto& w : v)
    if (w.weight != v.front().weight) return false;
  return true;
}

/// The same quantile as the weighted rule below when every weight is equal, in O(n) with
/// nth_element: position q*n - 0.5 between order statistics, clamped to the ends.
template <class Item>
double equal_weight_quantile(std::vector<Item>& v, double q) {
  const double n = static_cast<double>(v.size());
  const double p = q * n - 0.5;
  auto by_value = [](const Item& a, const Item& b) { return value_of(a) < value_of(b); };
  if (p <= 0) return value_of(*std::min_element(v.begin(), v.end(), by_value));
  if (p >= n - 1) return value_of(*std::max_element(v.begin(), v.end(), by_value));
  const auto lo = static_cast<std::size_t>(std::floor(p));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end(), by_value);
  const double a = value_of(v[lo]);
  const double f = p - static_cast<double>(lo);
  if (f == 0) return a;
  const double b = value_of(
      *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end(), by_value));
  return a + f * (b - a);
}

}  // namespace

double quantile_of(std::vector<double> v, double q) {
  return v.empty() ? kUnknown : equal_weight_quantile(v, q);
}

double median_of(std::vector<double> v) {
  return quantile_of(std::move(v), 0.5);
}

template <class Item>
double weighted_quantile(std::vector<Item>& v, double q) {
  if (v.empty()) return kUnknown;
  if (equal_weights(v)) return v.front().weight > 0 ? equal_weight_quantile(v, q) : kUnknown;
  auto by_value = [](const Item& a, const Item& b) { return a.value < b.value; };
  if (!std::is_sorted(v.begin(), v.end(), by_value)) std::sort(v.begin(), v.end(), by_value);
  double total = 0;
  for (const auto& w : v) total += w.weight;
  if (total <= 0) return kUnknown;
  // Linear interpolation between the midpoints of each value's weight span.
  const double target = q * total;
  double acc = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double mid = acc + v[i].weight / 2.0;
    if (target <= mid) {
      if (i == 0) return v[0].value;
      const double prev_mid = acc - v[i - 1].weight / 2.0;
      const double f = (target - prev_mid) / (mid - prev_mid);
      return v[i - 1].value + f * (v[i].value - v[i - 1].value);
    }
    acc += v[i].weight;
  }
  return v.back().value;
}

template <class Item>
Distribution distribution(std::vector<Item> values, bool tails) {
  Distribution d;
  values.erase(
      std::remove_if(values.begin(), values.end(),
                     [](const Item& w) { return !std::isfinite(w.value) || w.weight <= 0; }),
      values.end());
  if (values.empty()) return d;
  double sum = 0, wsum = 0;
  d.min = values.front().value;
  d.max = values.front().value;
  for (const auto& w : values) {
    sum += static_cast<double>(w.value) * static_cast<double>(w.weight);
    wsum += static_cast<double>(w.weight);
    d.min = std::min<double>(d.min, w.value);
    d.max = std::max<double>(d.max, w.value);
  }
  d.count = values.size();
  d.mean = sum / wsum;
  d.median = weighted_quantile(values, 0.5);
  if (tails) {
    d.p05 = weighted_quantile(values, 0.05);
    d.p95 = weighted_quantile(values, 0.95);
  }
  // The absolute deviations overwrite the values: one buffer for both.
  for (auto& w : values) w.value = static_cast<decltype(w.value)>(std::fabs(w.value - d.median));
  d.mad = weighted_quantile(values, 0.5);
  return d;
}

template double weighted_quantile<Weighted>(std::vector<Weighted>&, double);
template double weighted_quantile<WeightedF>(std::vector<WeightedF>&, double);
template Distribution distribution<Weighted>(std::vector<Weighted>, bool);
template Distribution distribution<WeightedF>(std::vector<WeightedF>, bool);

}  // namespace mfu::detail
