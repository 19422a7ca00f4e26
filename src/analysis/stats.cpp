#include "analysis/stats.hpp"

#include <algorithm>
#include <cmath>

namespace mfu::detail {

double weighted_quantile(std::vector<Weighted>& v, double q) {
  if (v.empty()) return kUnknown;
  std::sort(v.begin(), v.end(), [](const Weighted& a, const Weighted& b) { return a.value < b.value; });
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

Distribution distribution(std::vector<Weighted> values) {
  Distribution d;
  values.erase(std::remove_if(values.begin(), values.end(),
                              [](const Weighted& w) { return !std::isfinite(w.value) || w.weight <= 0; }),
               values.end());
  if (values.empty()) return d;
  double sum = 0, wsum = 0;
  d.min = values.front().value;
  d.max = values.front().value;
  for (const auto& w : values) {
    sum += w.value * w.weight;
    wsum += w.weight;
    d.min = std::min(d.min, w.value);
    d.max = std::max(d.max, w.value);
  }
  d.count = values.size();
  d.mean = sum / wsum;
  d.median = weighted_quantile(values, 0.5);
  d.p05 = weighted_quantile(values, 0.05);
  d.p95 = weighted_quantile(values, 0.95);
  std::vector<Weighted> dev;
  dev.reserve(values.size());
  for (const auto& w : values) dev.push_back({std::fabs(w.value - d.median), w.weight});
  d.mad = weighted_quantile(dev, 0.5);
  return d;
}

}  // namespace mfu::detail
