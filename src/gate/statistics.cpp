// The noise model of `mfu check --baseline`: a one-sided Mann-Whitney U test on step times and a
// bootstrap confidence interval of the median ratio.
#include "gate/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "mfu/gate.hpp"

namespace mfu {

double mann_whitney_greater(const std::vector<double>& a, const std::vector<double>& b) {
  // Mann & Whitney (1947); normal approximation with tie correction (e.g. Lehmann,
  // Nonparametrics, 1975, Sec. 1.4). H1: values of `a` tend to exceed those of `b`.
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  if (a.empty() || b.empty()) return 1.0;
  std::vector<std::pair<double, int>> all;
  all.reserve(a.size() + b.size());
  for (double v : a) all.emplace_back(v, 0);
  for (double v : b) all.emplace_back(v, 1);
  std::sort(all.begin(), all.end());
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double avg_rank =
        (static_cast<double>(i) + static_cast<double>(j) + 1.0) / 2.0;  // 1-based
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].second == 0) rank_sum_a += avg_rank;
    i = j;
  }
  const double u = rank_sum_a - n1 * (n1 + 1) / 2.0;
  const double mean = n1 * n2 / 2.0;
  const double n = n1 + n2;
  const double var = n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
  if (var <= 0) return u > mean ? 0.0 : 1.0;
  const double z = (u - mean - 0.5) / std::sqrt(var);  // continuity correction
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

namespace detail {

std::pair<double, double> bootstrap_ratio_ci(const std::vector<double>& cur,
                                             const std::vector<double>& base, double alpha,
                                             std::uint64_t seed, int resamples) {
  std::mt19937_64 rng(seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(resamples));
  std::vector<double> x(cur.size()), y(base.size());
  std::uniform_int_distribution<std::size_t> pick_c(0, cur.size() - 1), pick_b(0, base.size() - 1);
  for (int r = 0; r < resamples; ++r) {
    for (auto& v : x) v = cur[pick_c(rng)];
    for (auto& v : y) v = base[pick_b(rng)];
    ratios.push_back(median_of(x) / median_of(y));
  }
  std::sort(ratios.begin(), ratios.end());
  const auto at = [&](double q) {
    const double pos = q * static_cast<double>(ratios.size() - 1);
    const auto i = static_cast<std::size_t>(pos);
    const double f = pos - static_cast<double>(i);
    return i + 1 < ratios.size() ? ratios[i] * (1 - f) + ratios[i + 1] * f : ratios[i];
  };
  return {at(alpha / 2), at(1 - alpha / 2)};
}

}  // namespace detail
}  // namespace mfu
