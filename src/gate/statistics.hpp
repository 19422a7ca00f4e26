#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/stats.hpp"  // median_of

namespace mfu::detail {

/// Percentile bootstrap (Efron & Tibshirani 1993, ch. 13) of median(cur) / median(base):
/// the (alpha/2, 1-alpha/2) interval from `resamples` resamples with a fixed seed.
[[nodiscard]] std::pair<double, double> bootstrap_ratio_ci(const std::vector<double>& cur,
                                                           const std::vector<double>& base,
                                                           double alpha, std::uint64_t seed,
                                                           int resamples = 2000);

}  // namespace mfu::detail
