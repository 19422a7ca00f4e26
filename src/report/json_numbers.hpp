#pragma once
// Numbers in the JSON reports as they are meant: counts as integers, values stored as float
// with the digits a float holds.

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace mfu::detail {

/// A count as a JSON integer when it is whole (8 GPUs read 8, not 8.0); null when unknown.
[[nodiscard]] inline nlohmann::json json_count(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<std::int64_t>(v);
  return v;
}

/// A value the run keeps as a float (the loss), printed with the digits a float holds
/// (0.29823, not 0.29822999238967896): the shortest text that reads back as the same float.
[[nodiscard]] inline double float_digits(double v) {
  if (!std::isfinite(v)) return v;
  return std::strtod(fmt::format("{}", static_cast<float>(v)).c_str(), nullptr);
}

}  // namespace mfu::detail
