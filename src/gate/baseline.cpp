// Baselines for `mfu check`: reports written by `mfu analyze --output json`.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mfu/error.hpp"
#include "mfu/gate.hpp"
#include "mfu/report.hpp"

namespace mfu {

Baseline parse_baseline(std::string_view json_text, const std::string& origin) {
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(fmt::format("baseline '{}' is not a JSON report", origin),
                "write one with: mfu analyze RUN.log --output json -o baseline.json");
  if (!j.contains("schema_version") || !j["schema_version"].is_number())
    throw Error(fmt::format("baseline '{}' has no schema_version: it is not an mfu report", origin),
                "write one with: mfu analyze RUN.log --output json -o baseline.json");
  // Compared as a double: a huge or fractional number must not go through an int cast.
  if (const double version = j["schema_version"].get<double>(); !(version <= kJsonSchemaVersion))
    throw Error(fmt::format("baseline '{}' has schema_version {}, newer than this mfu ({})", origin,
                            version, kJsonSchemaVersion),
                "update mfu or regenerate the baseline");
  Baseline b;
  b.path = origin;
  auto num = [&](const nlohmann::json& o, const char* k) -> std::optional<double> {
    auto it = o.find(k);
    if (it != o.end() && it->is_number()) return it->get<double>();
    return std::nullopt;
  };
  b.mfu = num(j, "mfu");
  b.mfu_steady = num(j, "mfu_steady");
  b.tokens_per_s = num(j, "tokens_per_s");
  b.model_flops_per_token = num(j, "model_flops_per_token");
  b.gpus = num(j, "gpus");
  if (j.contains("gpu") && j["gpu"].is_string()) b.gpu = j["gpu"].get<std::string>();
  if (auto st = j.find("step_time_s"); st != j.end() && st->is_object())
    b.step_time_median_s = num(*st, "median");
  if (auto s = j.find("step_time_sample_s"); s != j.end() && s->is_array()) {
    for (const auto& v : *s)
      if (v.is_number() && v.get<double>() > 0) b.step_times_s.push_back(v.get<double>());
  }
  if (!b.mfu_steady && !b.tokens_per_s && !b.step_time_median_s)
    throw Error(
        fmt::format("baseline '{}' holds no MFU, tokens/s or step time to compare with", origin));
  return b;
}

Baseline load_baseline(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(fmt::format("cannot open baseline '{}'", path),
                "write one with: mfu analyze RUN.log --output json -o " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_baseline(ss.str(), path);
}

}  // namespace mfu
