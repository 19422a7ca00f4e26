// Baselines for `mfu check`: reports written by `mfu analyze --output json`, validated as
// inputs (a field of the wrong type or out of range names itself; it never switches the
// comparison silently or compares against 0).
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mfu/error.hpp"
#include "mfu/gate.hpp"
#include "mfu/report.hpp"

namespace mfu {
namespace {

constexpr const char* kHowToWrite =
    "a baseline is the JSON analysis of an earlier run of the same job";

struct Reader {
  const nlohmann::json& j;
  const std::string& origin;

  [[noreturn]] void bad(const std::string& field, const std::string& why) const {
    throw Error(fmt::format("baseline '{}': field '{}' {}", origin, field, why),
                "write the baseline again as the JSON analysis of the baseline run");
  }

  /// A number, or nullopt when absent or null; anything else is an error naming the field.
  std::optional<double> number(const nlohmann::json& o, const std::string& field,
                               const std::string& key) const {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) bad(field, fmt::format("is {}, not a number", it->type_name()));
    const double v = it->get<double>();
    if (!std::isfinite(v)) bad(field, "is not a finite number");
    return v;
  }

  /// A share that must lie in (0, 1]: an MFU of 0 leaves nothing to compare against.
  std::optional<double> mfu(const std::string& key) const {
    auto v = number(j, key, key);
    if (v && !(*v > 0 && *v <= 1)) bad(key, fmt::format("is {}: an MFU lies in (0, 1]", *v));
    return v;
  }

  std::optional<double> positive(const nlohmann::json& o, const std::string& field,
                                 const std::string& key) const {
    auto v = number(o, field, key);
    if (v && !(*v > 0)) bad(field, fmt::format("is {}: it must be positive", *v));
    return v;
  }

  std::string text(const std::string& key) const {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    if (!it->is_string()) bad(key, fmt::format("is {}, not a string", it->type_name()));
    return it->get<std::string>();
  }

  /// {"bucket": seconds} of the steady split, each a number >= 0.
  std::map<std::string, double> split(const std::string& key) const {
    std::map<std::string, double> out;
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return out;
    if (!it->is_object()) bad(key, fmt::format("is {}, not an object", it->type_name()));
    for (const auto& [name, v] : it->items()) {
      if (!v.is_number() || !(v.get<double>() >= 0))
        bad(key + "." + name, "is not a number of seconds >= 0");
      out[name] = v.get<double>();
    }
    return out;
  }

  /// The share of each bucket in "buckets": [{"name": ..., "fraction": ...}].
  std::map<std::string, double> shares() const {
    std::map<std::string, double> out;
    auto it = j.find("buckets");
    if (it == j.end() || it->is_null()) return out;
    if (!it->is_array()) bad("buckets", fmt::format("is {}, not an array", it->type_name()));
    for (const auto& b : *it) {
      if (!b.is_object() || !b.contains("name") || !b["name"].is_string()) continue;
      const std::string name = b["name"].get<std::string>();
      auto f = number(b, "buckets." + name + ".fraction", "fraction");
      if (f && !(*f >= 0 && *f <= 1)) bad("buckets." + name + ".fraction", "is not in 0..1");
      if (f) out[name] = *f;
    }
    return out;
  }

  std::vector<double> sample(const std::string& key, bool share) const {
    std::vector<double> out;
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return out;
    if (!it->is_array()) bad(key, fmt::format("is {}, not an array", it->type_name()));
    for (const auto& v : *it) {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0) ||
          (share && v.get<double>() > 1))
        bad(key,
            "holds a value that is not a positive number" + std::string(share ? " up to 1" : ""));
      out.push_back(v.get<double>());
    }
    return out;
  }
};

void check_schema(const nlohmann::json& j, const std::string& origin) {
  if (!j.contains("schema_version") || !j["schema_version"].is_number())
    throw Error(fmt::format("baseline '{}' has no schema_version: it is not an mfu report", origin),
                kHowToWrite);
  // Compared as a double: a huge or fractional number must not go through an int cast.
  const double version = j["schema_version"].get<double>();
  if (!(version >= 1) || version != std::floor(version))
    throw Error(
        fmt::format("baseline '{}': schema_version {} is not a version mfu wrote", origin, version),
        kHowToWrite);
  if (!(version <= kJsonSchemaVersion))
    throw Error(fmt::format("baseline '{}' has schema_version {}, newer than this mfu ({})", origin,
                            version, kJsonSchemaVersion),
                "update mfu or regenerate the baseline");
}

}  // namespace

Baseline parse_baseline(std::string_view json_text, const std::string& origin) {
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(fmt::format("baseline '{}' is not a JSON report", origin), kHowToWrite);
  check_schema(j, origin);
  const Reader r{j, origin};
  Baseline b;
  b.path = origin;
  b.mfu = r.mfu("mfu");
  b.mfu_steady = r.mfu("mfu_steady");
  b.tokens_per_s = r.positive(j, "tokens_per_s", "tokens_per_s");
  b.tokens_per_s_per_gpu = r.positive(j, "tokens_per_s_per_gpu", "tokens_per_s_per_gpu");
  b.model_flops_per_token = r.positive(j, "model_flops_per_token", "model_flops_per_token");
  b.gpus = r.positive(j, "gpus", "gpus");
  b.gpu = r.text("gpu");
  b.dtype = r.text("dtype");
  b.convention = r.text("convention");
  if (auto st = j.find("step_time_s"); st != j.end() && !st->is_null()) {
    if (!st->is_object()) r.bad("step_time_s", "is not an object");
    b.step_time_median_s = r.positive(*st, "step_time_s.median", "median");
  }
  b.step_times_s = r.sample("step_time_sample_s", false);
  b.mfu_sample = r.sample("mfu_sample", true);
  b.tokens_per_s_per_gpu_sample = r.sample("tokens_per_s_per_gpu_sample", false);
  b.bucket_share = r.shares();
  b.steady_step_split_s = r.split("steady_step_split_s");
  if (!b.mfu_steady && !b.tokens_per_s_per_gpu && !b.tokens_per_s && !b.step_time_median_s)
    throw Error(
        fmt::format("baseline '{}' holds no MFU, tokens/s or step time to compare with", origin),
        kHowToWrite);
  return b;
}

Baseline load_baseline(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open baseline '{}'", path), kHowToWrite);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_baseline(ss.str(), path);
}

}  // namespace mfu
