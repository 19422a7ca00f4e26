// Job summaries in exact integers, their merge and their JSON line (summary.hpp).
#include "mfu/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "mfu/error.hpp"
#include "mfu/inputs.hpp"

namespace mfu {
namespace {

constexpr const char* kType = "mfu_job_summary";

/// A non-negative quantity rounded to a whole number once (NaN and negatives count 0).
ExactCount exact(double v) {
  if (!std::isfinite(v) || v <= 0) return 0;
  if (v >= 1.7e38) throw Error(fmt::format("{} is beyond what a summary holds", v));
  // Split so the rounding is of the value, not of a double product of it.
  const double high = std::floor(v / 1e18);
  const double low = std::nearbyint(v - high * 1e18);
  return static_cast<ExactCount>(high) * ExactCount{1000000000000000000ULL} +
         static_cast<ExactCount>(low);
}

void add_to(std::map<std::string, ExactCount>& into,
            const std::map<std::string, ExactCount>& from) {
  for (const auto& [k, v] : from) into[k] += v;
}

ExactCount from_decimal(const std::string& s, const std::string& origin) {
  if (s.empty() || s.size() > 39 || s.find_first_not_of("0123456789") != std::string::npos)
    throw Error(fmt::format("{}: '{}' is not a whole number of a job summary", origin, s));
  ExactCount v = 0;
  for (char c : s) v = v * 10 + static_cast<ExactCount>(c - '0');
  return v;
}

nlohmann::json map_json(const std::map<std::string, ExactCount>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : m) j[k] = to_decimal(v);
  return j;
}

std::map<std::string, ExactCount> map_from(const nlohmann::json& j, const std::string& origin) {
  std::map<std::string, ExactCount> m;
  if (!j.is_object()) return m;
  for (const auto& [k, v] : j.items())
    m[k] = from_decimal(v.is_string() ? v.get<std::string>() : v.dump(), origin);
  return m;
}

double min_known(double a, double b) {
  if (!std::isfinite(a)) return b;
  if (!std::isfinite(b)) return a;
  return std::min(a, b);
}

double max_known(double a, double b) {
  if (!std::isfinite(a)) return b;
  if (!std::isfinite(b)) return a;
  return std::max(a, b);
}

}  // namespace

std::string to_decimal(ExactCount v) {
  if (v == 0) return "0";
  std::string s;
  for (; v > 0; v /= 10) s.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
  std::reverse(s.begin(), s.end());
  return s;
}

double JobSummary::mfu() const {
  return peak_flops > 0 ? static_cast<double>(model_flops) / static_cast<double>(peak_flops)
                        : kUnknown;
}

double JobSummary::gpu_hours() const {
  return static_cast<double>(gpu_ns) * 1e-9 / 3600.0;
}

JobSummary summarize_job(const Analysis& a, const Run& run) {
  if (!known(a.gpus) || a.per_gpu)
    throw Error(fmt::format("{}: the GPU count is unknown, so its GPU time is too",
                            a.inputs.empty() ? std::string("the run") : a.inputs.front()),
                fmt::format("give {} (a fleet report weighs jobs by GPU time)",
                            input_phrase(Input::kGpus)));
  JobSummary s;
  s.jobs = 1;
  for (const auto& b : a.buckets) {
    const ExactCount ns = exact(b.seconds * a.gpus * 1e9);
    if (ns == 0) continue;
    s.bucket_gpu_ns[b.name] += ns;
    s.gpu_ns += ns;
  }
  const bool with_mfu = a.mfu && known(a.total_model_flops);
  if (with_mfu) {
    s.model_flops = exact(a.total_model_flops);
    s.peak_flops = exact(a.peak_flops_per_gpu * a.gpus * a.mfu_time_s);
    s.mfu_gpu_ns = s.gpu_ns;
  }
  s.tokens = exact(a.total_tokens);
  s.steps = a.iterations_total;
  s.restarts = a.restarts;
  // The model's name as the log gives it, else its shape as the analysis read it.
  std::string model = run.meta.text("model").value_or("");
  for (const auto& u : a.used)
    if (model.empty() && u.name == "model") model = u.value;
  s.gpu_ns_by_gpu[a.gpu.empty() ? "unknown" : a.gpu] = s.gpu_ns;
  s.gpu_ns_by_model[model.empty() ? "unknown" : model] = s.gpu_ns;
  s.gpu_ns_by_framework[a.format.empty() ? "unknown" : a.format] = s.gpu_ns;
  s.start_s = run.first_timestamp_s;
  s.end_s = run.last_timestamp_s;
  s.inputs = a.inputs;
  std::sort(s.inputs.begin(), s.inputs.end());
  return s;
}

JobSummary merge_summaries(const JobSummary& a, const JobSummary& b) {
  JobSummary s = a;
  s.jobs += b.jobs;
  add_to(s.bucket_gpu_ns, b.bucket_gpu_ns);
  s.gpu_ns += b.gpu_ns;
  s.model_flops += b.model_flops;
  s.tokens += b.tokens;
  s.peak_flops += b.peak_flops;
  s.mfu_gpu_ns += b.mfu_gpu_ns;
  s.steps += b.steps;
  s.restarts += b.restarts;
  add_to(s.gpu_ns_by_gpu, b.gpu_ns_by_gpu);
  add_to(s.gpu_ns_by_model, b.gpu_ns_by_model);
  add_to(s.gpu_ns_by_framework, b.gpu_ns_by_framework);
  for (const auto& [key, m] : b.gpu_ns_by) add_to(s.gpu_ns_by[key], m);
  s.start_s = min_known(a.start_s, b.start_s);
  s.end_s = max_known(a.end_s, b.end_s);
  std::vector<std::string> inputs;
  std::merge(a.inputs.begin(), a.inputs.end(), b.inputs.begin(), b.inputs.end(),
             std::back_inserter(inputs));
  s.inputs = std::move(inputs);
  return s;
}

std::string summary_json(const JobSummary& s) {
  nlohmann::json j;
  j["type"] = kType;
  j["schema_version"] = 1;
  j["jobs"] = s.jobs;
  j["gpu_ns"] = to_decimal(s.gpu_ns);
  j["bucket_gpu_ns"] = map_json(s.bucket_gpu_ns);
  j["model_flops"] = to_decimal(s.model_flops);
  j["tokens"] = to_decimal(s.tokens);
  j["peak_flops"] = to_decimal(s.peak_flops);
  j["mfu_gpu_ns"] = to_decimal(s.mfu_gpu_ns);
  j["steps"] = s.steps;
  j["restarts"] = s.restarts;
  j["gpu_ns_by_gpu"] = map_json(s.gpu_ns_by_gpu);
  j["gpu_ns_by_model"] = map_json(s.gpu_ns_by_model);
  j["gpu_ns_by_framework"] = map_json(s.gpu_ns_by_framework);
  j["gpu_ns_by"] = nlohmann::json::object();
  for (const auto& [key, m] : s.gpu_ns_by) j["gpu_ns_by"][key] = map_json(m);
  j["start_s"] = std::isfinite(s.start_s) ? nlohmann::json(s.start_s) : nlohmann::json(nullptr);
  j["end_s"] = std::isfinite(s.end_s) ? nlohmann::json(s.end_s) : nlohmann::json(nullptr);
  j["inputs"] = s.inputs;
  // Derived, for people reading the line; never read back.
  j["mfu"] = std::isfinite(s.mfu()) ? nlohmann::json(s.mfu()) : nlohmann::json(nullptr);
  j["gpu_hours"] = s.gpu_hours();
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

JobSummary parse_summary(std::string_view line, const std::string& origin) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("type", "") != kType)
    throw Error(
        fmt::format("{}: not a job summary (a line of 'mfu analyze --output summary')", origin),
        "give the summaries that 'mfu analyze --output summary' or 'mfu merge' wrote");
  auto text = [&](const char* key) {
    const auto& v = j.contains(key) ? j.at(key) : nlohmann::json("0");
    return from_decimal(v.is_string() ? v.get<std::string>() : v.dump(), origin);
  };
  JobSummary s;
  s.jobs = j.value("jobs", std::uint64_t{0});
  s.gpu_ns = text("gpu_ns");
  s.bucket_gpu_ns = map_from(j.value("bucket_gpu_ns", nlohmann::json()), origin);
  s.model_flops = text("model_flops");
  s.tokens = text("tokens");
  s.peak_flops = text("peak_flops");
  s.mfu_gpu_ns = text("mfu_gpu_ns");
  s.steps = j.value("steps", std::uint64_t{0});
  s.restarts = j.value("restarts", std::uint64_t{0});
  s.gpu_ns_by_gpu = map_from(j.value("gpu_ns_by_gpu", nlohmann::json()), origin);
  s.gpu_ns_by_model = map_from(j.value("gpu_ns_by_model", nlohmann::json()), origin);
  s.gpu_ns_by_framework = map_from(j.value("gpu_ns_by_framework", nlohmann::json()), origin);
  if (j.contains("gpu_ns_by") && j["gpu_ns_by"].is_object())
    for (const auto& [key, m] : j["gpu_ns_by"].items()) s.gpu_ns_by[key] = map_from(m, origin);
  if (j.contains("start_s") && j["start_s"].is_number()) s.start_s = j["start_s"].get<double>();
  if (j.contains("end_s") && j["end_s"].is_number()) s.end_s = j["end_s"].get<double>();
  if (j.contains("inputs") && j["inputs"].is_array())
    for (const auto& i : j["inputs"])
      if (i.is_string()) s.inputs.push_back(i.get<std::string>());
  std::sort(s.inputs.begin(), s.inputs.end());
  ExactCount sum = 0;
  for (const auto& [k, v] : s.bucket_gpu_ns) sum += v;
  if (sum != s.gpu_ns)
    throw Error(
        fmt::format("{}: the buckets' GPU time does not add up to the total (edited by "
                    "hand, or cut off?)",
                    origin));
  return s;
}

}  // namespace mfu
