#pragma once
// Order statistics over step times: median, quantiles, MAD. Weighted by how many iterations
// each record stands for.

#include <vector>

#include "mfu/analysis.hpp"

namespace mfu::detail {

struct Weighted {
  double value;
  double weight;
};

/// Quantile q in [0,1] of weighted values (sorted in place); NaN when empty.
[[nodiscard]] double weighted_quantile(std::vector<Weighted>& values, double q);

/// mean, median, p05, p95, min, max and MAD of the values.
[[nodiscard]] Distribution distribution(std::vector<Weighted> values);

}  // namespace mfu::detail
