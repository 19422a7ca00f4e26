#pragma once
// Order statistics over step times: median, quantiles, MAD. Weighted by how many iterations
// each record stands for.

#include <vector>

#include "mfu/analysis.hpp"

namespace mfu::detail {

/// Values stay double: a gate compares the median step time with a threshold exactly.
struct Weighted {
  double value;
  double weight;
};

/// Quantile q in [0,1] of weighted values (sorted in place); NaN when empty.
[[nodiscard]] double weighted_quantile(std::vector<Weighted>& values, double q);

/// mean, median, p05, p95, min, max and MAD of the values (p05/p95 only when `tails`).
[[nodiscard]] Distribution distribution(std::vector<Weighted> values, bool tails = true);

}  // namespace mfu::detail
