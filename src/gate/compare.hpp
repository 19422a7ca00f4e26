#pragma once
// The baseline comparison of `mfu check` (compare.cpp).

#include <string>
#include <vector>

#include "mfu/gate.hpp"

namespace mfu::detail {

/// Throws mfu::Error naming every difference in GPU type or count, model FLOPs per token,
/// FLOP convention or dtype that `o.allow_different` does not allow; allowed ones are noted.
void check_comparable(const Analysis& a, const Baseline& b, const GateOptions& o,
                      std::vector<std::string>& notes);

/// The bucket whose seconds per steady step grew the most against the baseline's steady
/// split (empty when none grew or the baseline keeps no split).
[[nodiscard]] std::string grown_bucket(const Analysis& a, const Baseline& b);

/// One check per level known in both runs; sets `r.regression` to the first.
[[nodiscard]] std::vector<CheckResult> compare_with_baseline(const Analysis& a,
                                                             const GateOptions& o, GateResult& r);

}  // namespace mfu::detail
