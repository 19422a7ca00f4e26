#pragma once
// A tolerant reader for flat one-line dicts as Python prints them ({'loss': 0.09, 'epoch': 1.0})
// and as JSON writes them ({"loss": 0.09}): single or double quotes, True/False/None, nan/inf,
// quoted numbers ('2.029'). Nested values are skipped.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mfu::detail {

struct FlatValue {
  std::string key;
  std::string text;              ///< the raw value without quotes
  std::optional<double> number;  ///< when the value (quoted or not) is a number
};

/// Parses `s` (which must start with '{' after spaces). Returns nullopt when it is not a dict.
std::optional<std::vector<FlatValue>> parse_flat_dict(std::string_view s);

}  // namespace mfu::detail
