#pragma once
// Order statistics over step times: median, quantiles, MAD. Weighted by how many iterations
// each record stands for.

#include <cstddef>
#include <vector>

#include "mfu/analysis.hpp"

namespace mfu::detail {

/// Values stay double: a gate compares the median step time with a threshold exactly.
struct Weighted {
  double value;
  double weight;
};

/// Half the memory, for series only reported (per-iteration MFU): 7 significant digits.
struct WeightedF {
  float value;
  float weight;
};

/// Where quantile q of n equally weighted values lies, the one rule of every quantile here:
/// position q*n - 0.5 between the order statistics `rank` and `rank + 1` (0-based), at
/// `fraction` of the way; clamped to the ends (fraction 0 there).
struct QuantilePosition {
  std::size_t rank = 0;
  double fraction = 0;
};
[[nodiscard]] QuantilePosition quantile_position(double q, std::size_t n);

/// Quantile q in [0,1] of equally weighted values, by the rule of weighted_quantile (position
/// q*n - 0.5 between order statistics, so q=0.5 is the usual median); NaN when empty. O(n).
[[nodiscard]] double quantile_of(std::vector<double> values, double q);
[[nodiscard]] double median_of(std::vector<double> values);

/// Quantile q in [0,1] of weighted values (reordered in place); NaN when empty. Instantiated
/// for Weighted and WeightedF.
template <class Item>
[[nodiscard]] double weighted_quantile(std::vector<Item>& values, double q);

/// mean, median, p05, p95, min, max and MAD of the values (p05/p95 only when `tails`).
template <class Item>
[[nodiscard]] Distribution distribution(std::vector<Item> values, bool tails = true);

}  // namespace mfu::detail
