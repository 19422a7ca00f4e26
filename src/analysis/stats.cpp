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

/// Order statistics of one buffer, each found by nth_element inside the bracket that the ones
/// found before leave for it: the median first, then p05 in the lower half and p95 in the upper
/// half cost n + n/2 + n/2 comparisons, not 3n.
template <class Item>
class Selector {
 public:
  explicit Selector(std::vector<Item>& v) : v_(v) {}
  /// The k-th smallest value (0-based).
  double at(std::size_t k) {
    // Positions already placed hold their sorted values, with no larger value before them and
    // no smaller one after: the k-th lies between the nearest placed neighbours.
    const auto after = std::lower_bound(placed_.begin(), placed_.end(), k);
    if (after != placed_.end() && *after == k) return value_of(v_[k]);
    const std::size_t lo = after == placed_.begin() ? 0 : *(after - 1) + 1;
    const std::size_t hi = after == placed_.end() ? v_.size() : *after;
    auto by_value = [](const Item& a, const Item& b) { return value_of(a) < value_of(b); };
    std::nth_element(v_.begin() + static_cast<std::ptrdiff_t>(lo),
                     v_.begin() + static_cast<std::ptrdiff_t>(k),
                     v_.begin() + static_cast<std::ptrdiff_t>(hi), by_value);
    placed_.insert(after, k);
    return value_of(v_[k]);
  }
  [[nodiscard]] std::size_t size() const { return v_.size(); }

 private:
  std::vector<Item>& v_;
  std::vector<std::size_t> placed_;
};

/// The same quantile as the weighted rule below when every weight is equal, in O(n): position
/// q*n - 0.5 between order statistics, clamped to the ends.
template <class Item>
double equal_weight_quantile(Selector<Item>& s, double q) {
  const QuantilePosition pos = quantile_position(q, s.size());
  const double a = s.at(pos.rank);
  if (pos.fraction == 0) return a;
  return a + pos.fraction * (s.at(pos.rank + 1) - a);
}

template <class Item>
double equal_weight_quantile(std::vector<Item>& v, double q) {
  Selector<Item> s(v);
  return equal_weight_quantile(s, q);
}

/// Median, tails and MAD of values of equal weight (overwritten by their deviations).
template <class Item>
void equal_weight_order_statistics(std::vector<Item>& values, bool tails, Distribution& d) {
  {
    Selector<Item> s(values);
    d.median = equal_weight_quantile(s, 0.5);
    if (tails) {
      d.p05 = equal_weight_quantile(s, 0.05);
      d.p95 = equal_weight_quantile(s, 0.95);
    }
  }
  // The absolute deviations overwrite the values: one buffer for both.
  for (auto& w : values) {
    if constexpr (std::is_arithmetic_v<Item>)
      w = static_cast<Item>(std::fabs(w - d.median));
    else
      w.value = static_cast<decltype(w.value)>(std::fabs(w.value - d.median));
  }
  d.mad = equal_weight_quantile(values, 0.5);
}

}  // namespace

QuantilePosition quantile_position(double q, std::size_t n) {
  const double p = q * static_cast<double>(n) - 0.5;
  if (p <= 0) return {0, 0};
  if (p >= static_cast<double>(n) - 1) return {n - 1, 0};
  const auto lo = static_cast<std::size_t>(std::floor(p));
  return {lo, p - static_cast<double>(lo)};
}

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
  if (equal_weights(values)) {
    equal_weight_order_statistics(values, tails, d);
    return d;
  }
  d.median = weighted_quantile(values, 0.5);
  if (tails) {
    d.p05 = weighted_quantile(values, 0.05);
    d.p95 = weighted_quantile(values, 0.95);
  }
  for (auto& w : values) w.value = static_cast<decltype(w.value)>(std::fabs(w.value - d.median));
  d.mad = weighted_quantile(values, 0.5);
  return d;
}

template double weighted_quantile<Weighted>(std::vector<Weighted>&, double);
template double weighted_quantile<WeightedF>(std::vector<WeightedF>&, double);
template Distribution distribution<Weighted>(std::vector<Weighted>, bool);
template Distribution distribution<WeightedF>(std::vector<WeightedF>, bool);

}  // namespace mfu::detail
