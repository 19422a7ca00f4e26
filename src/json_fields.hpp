#pragma once
// Typed reads of fields from JSON that users supply (logs, config.json, baselines): a field of
// the wrong type reads as absent instead of throwing nlohmann's type_error (found by fuzzing:
// an :::MLLOG line with "key": {}).

#include <nlohmann/json.hpp>
#include <string>

namespace mfu::detail {

[[nodiscard]] inline std::string string_field(const nlohmann::json& j, const char* key,
                                              std::string fallback = {}) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace mfu::detail
