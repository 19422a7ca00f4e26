#include "mfu/gpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "embedded_data.hpp"
#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
#include "text.hpp"

namespace mfu {
namespace {

struct DtypeName {
  Dtype dtype;
  const char* name;
};
constexpr DtypeName kDtypeNames[] = {{Dtype::kFp64, "fp64"}, {Dtype::kFp64Tensor, "fp64_tensor"},
                                     {Dtype::kFp32, "fp32"}, {Dtype::kFp32Matrix, "fp32_matrix"},
                                     {Dtype::kTf32, "tf32"}, {Dtype::kBf16, "bf16"},
                                     {Dtype::kFp16, "fp16"}, {Dtype::kFp8, "fp8"},
                                     {Dtype::kInt8, "int8"}, {Dtype::kFp6, "fp6"},
                                     {Dtype::kFp4, "fp4"},   {Dtype::kInt4, "int4"}};

std::vector<std::string> name_tokens(std::string_view name) {
  static const std::set<std::string> kVendorWords = {"nvidia", "amd",   "instinct", "intel",
                                                     "google", "cloud", "tesla",    "geforce",
                                                     "habana", "radeon"};
  std::vector<std::string> tokens;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty() && !kVendorWords.count(cur)) tokens.push_back(cur);
    cur.clear();
  };
  for (char c : name) {
    const char l = detail::lower(c);
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) {
      cur.push_back(l);
    } else {
      flush();
    }
  }
  flush();
  return tokens;
}

bool is_memory_token(const std::string& t) {
  if (detail::starts_with(t, "hbm") || detail::starts_with(t, "gddr")) return true;
  std::size_t i = 0;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  if (i == 0 || i == t.size()) return false;
  const std::string unit = t.substr(i);
  return unit == "gb" || unit == "g" || unit == "gib";
}

std::string join(const std::vector<std::string>& tokens) {
  std::string s;
  for (const auto& t : tokens) s += t;
  return s;
}

double number_or_zero(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return 0.0;
  if (!it->is_number()) throw Error(fmt::format("'{}' must be a number", key));
  return it->get<double>();
}

std::string string_or_empty(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_string()) throw Error(fmt::format("'{}' must be a string", key));
  return it->get<std::string>();
}

std::map<Dtype, double> read_peaks(const nlohmann::json& j, const char* key) {
  std::map<Dtype, double> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_object()) throw Error(fmt::format("'{}' must be an object of dtype: TFLOP/s", key));
  for (auto& [k, v] : it->items()) {
    if (!v.is_number() || v.get<double>() <= 0)
      throw Error(fmt::format("'{}.{}' must be a positive number of TFLOP/s", key, k));
    out[parse_dtype(k)] = v.get<double>() * 1e12;
  }
  return out;
}

GpuSpec read_spec(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("each accelerator must be a JSON object");
  GpuSpec s;
  s.id = string_or_empty(j, "id");
  if (s.id.empty()) throw Error("an accelerator has no 'id'");
  s.name = string_or_empty(j, "name");
  if (s.name.empty()) s.name = s.id;
  s.vendor = string_or_empty(j, "vendor");
  if (auto it = j.find("aliases"); it != j.end() && it->is_array()) {
    for (const auto& a : *it)
      if (a.is_string()) s.aliases.push_back(a.get<std::string>());
  }
  s.dense_flops = read_peaks(j, "dense_tflops");
  s.sparse_flops = read_peaks(j, "sparse_tflops");
  s.memory_bytes = number_or_zero(j, "memory_gb") * 1e9;
  s.memory_bandwidth = number_or_zero(j, "memory_bw_tb_s") * 1e12;
  s.interconnect = string_or_empty(j, "interconnect");
  s.interconnect_bandwidth = number_or_zero(j, "interconnect_gb_s") * 1e9;
  if (auto it = j.find("tdp_w"); it != j.end() && it->is_number()) s.tdp_w = it->get<double>();
  s.source = string_or_empty(j, "source");
  s.interconnect_source = string_or_empty(j, "interconnect_source");
  s.peak_note = string_or_empty(j, "peak_note");
  if (s.dense_flops.empty())
    throw Error(fmt::format("accelerator '{}' has no dense_tflops", s.id),
                "give at least one dense peak, e.g. \"dense_tflops\": {\"bf16\": 989.5}");
  return s;
}

}  // namespace

Dtype parse_dtype(std::string_view name) {
  const std::string n = detail::to_lower(detail::trim(name));
  for (const auto& d : kDtypeNames)
    if (n == d.name) return d.dtype;
  if (n == "bfloat16" || n == "torch.bfloat16" || n == "amp_bf16") return Dtype::kBf16;
  if (n == "float16" || n == "half" || n == "torch.float16" || n == "amp_fp16") return Dtype::kFp16;
  if (n == "float32" || n == "float" || n == "torch.float32") return Dtype::kFp32;
  if (n == "float64" || n == "double") return Dtype::kFp64;
  if (n == "fp8_e4m3" || n == "fp8_e5m2" || n == "e4m3" || n == "amp_fp8") return Dtype::kFp8;
  if (n == "nvfp4" || n == "mxfp4") return Dtype::kFp4;
  if (n == "mxfp6" || n == "fp6_e2m3" || n == "fp6_e3m2") return Dtype::kFp6;
  throw Error(fmt::format("unknown dtype '{}'", name),
              "use one of fp64, fp32, tf32, bf16, fp16, fp8, int8, fp6, fp4, int4");
}

const char* to_string(Dtype d) {
  for (const auto& n : kDtypeNames)
    if (n.dtype == d) return n.name;
  return "?";
}

std::optional<double> GpuSpec::dense_peak(Dtype d) const {
  auto it = dense_flops.find(d);
  if (it == dense_flops.end()) return std::nullopt;
  return it->second;
}

std::string normalize_gpu_name(std::string_view name) {
  return join(name_tokens(name));
}

const GpuDatabase& GpuDatabase::builtin() {
  // Parsed once: analyze() and project() take it as a default argument.
  static const GpuDatabase db = [] {
    GpuDatabase d;
    d.merge_json(detail::embedded_gpus_json(), "built-in data/gpus.json");
    return d;
  }();
  return db;
}

GpuDatabase GpuDatabase::load(const std::string& path) {
  GpuDatabase db = builtin();
  std::string file = path;
  if (file.empty()) {
    if (const char* env = std::getenv("MFU_GPU_DB"); env != nullptr && *env != '\0') file = env;
  }
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
      throw Error(
          fmt::format("cannot open GPU database '{}'", file),
          fmt::format("check the path given as {} or in MFU_GPU_DB", input_phrase(Input::kGpuDb)));
    std::stringstream ss;
    ss << in.rdbuf();
    db.merge_json(ss.str(), file);
  }
  return db;
}

void GpuDatabase::merge_json(std::string_view json_text, const std::string& origin) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(fmt::format("{}: not valid JSON: {}", origin, e.what()),
                "the GPU database uses the layout of data/gpus.json");
  }
  try {
    const nlohmann::json* list = nullptr;
    if (doc.is_array()) {
      list = &doc;
    } else if (doc.is_object()) {
      if (auto it = doc.find("accelerators"); it != doc.end()) list = &*it;
      if (auto it = doc.find("defaults"); it != doc.end() && it->is_object()) {
        for (auto& [k, v] : it->items())
          if (v.is_string()) defaults_[normalize_gpu_name(k)] = v.get<std::string>();
      }
    }
    if (list == nullptr || !list->is_array())
      throw Error("expected an 'accelerators' array", "see data/gpus.json for the layout");
    for (const auto& item : *list) {
      GpuSpec spec = read_spec(item);
      auto it = std::find_if(specs_.begin(), specs_.end(),
                             [&](const GpuSpec& s) { return s.id == spec.id; });
      if (it != specs_.end()) {
        *it = std::move(spec);
      } else {
        specs_.push_back(std::move(spec));
      }
    }
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", origin, e.what()), e.hint());
  }
}

namespace {

std::vector<const GpuSpec*> exact_matches(const std::vector<GpuSpec>& specs,
                                          const std::string& norm) {
  std::vector<const GpuSpec*> out;
  for (const auto& s : specs) {
    bool hit = normalize_gpu_name(s.id) == norm || normalize_gpu_name(s.name) == norm;
    for (const auto& a : s.aliases) hit = hit || normalize_gpu_name(a) == norm;
    if (hit) out.push_back(&s);
  }
  return out;
}

}  // namespace

namespace {

/// A TPU slice type: "v5p-128", "tpu-v4-32", "v5litepod-256" -> the chip's id, chips.
std::optional<std::pair<std::string, double>> tpu_slice(std::string_view query) {
  std::string q = detail::to_lower(detail::trim(query));
  if (detail::starts_with(q, "tpu-") || detail::starts_with(q, "tpu ")) q = q.substr(4);
  // Google Cloud TPU documentation: the number after the type counts TensorCores for v2, v3,
  // v4 and v5p (two a chip) and chips for v5e and v6e.
  static const std::pair<const char*, std::pair<const char*, double>> kTypes[] = {
      {"v2-", {"tpu-v2", 2}},   {"v3-", {"tpu-v3", 2}},   {"v4-", {"tpu-v4", 2}},
      {"v5p-", {"tpu-v5p", 2}}, {"v5e-", {"tpu-v5e", 1}}, {"v5litepod-", {"tpu-v5e", 1}},
      {"v6e-", {"tpu-v6e", 1}}};
  for (const auto& [prefix, chip] : kTypes) {
    if (!detail::starts_with(q, prefix)) continue;
    const auto n = detail::parse_int(q.substr(std::string_view(prefix).size()));
    if (!n || *n < 1 || static_cast<double>(*n) < chip.second) return std::nullopt;
    return std::make_pair(std::string(chip.first), static_cast<double>(*n) / chip.second);
  }
  return std::nullopt;
}

/// "NVIDIA A100-SXM4-40GB MIG 3g.20gb" -> the part's name and 3/7 (A100 and H100 have 7
/// compute slices; a "Ng" profile gets N of them, NVIDIA's MIG user guide).
std::optional<std::pair<std::string, double>> mig_slice(std::string_view query) {
  const std::string q = detail::to_lower(query);
  const std::size_t at = q.find(" mig ");
  if (at == std::string::npos) return std::nullopt;
  std::string_view profile = std::string_view(q).substr(at + 5);
  const auto g = detail::take_number(profile);
  if (!g || !detail::starts_with(profile, "g") || *g < 1 || *g > 7) return std::nullopt;
  return std::make_pair(std::string(query.substr(0, at)), *g / 7.0);
}

}  // namespace

GpuMatch GpuDatabase::try_resolve(std::string_view query) const {
  if (auto slice = tpu_slice(query)) {
    GpuMatch m = try_resolve(slice->first);
    if (!m.spec) return m;
    m.count = slice->second;
    m.note = fmt::format("'{}' is a slice of {} {} chips", query, slice->second, m.spec->id);
    return m;
  }
  if (auto mig = mig_slice(query)) {
    GpuMatch m = try_resolve(mig->first);
    if (!m.spec) return m;
    m.share = mig->second;
    m.note = fmt::format("'{}' is a MIG slice: {:.0f} of {}'s 7 compute slices, {:.3g} of its peak",
                         query, mig->second * 7, m.spec->id, mig->second);
    return m;
  }
  return try_resolve_name(query);
}

GpuMatch GpuDatabase::try_resolve_name(std::string_view query) const {
  std::vector<std::string> tokens = name_tokens(query);
  if (tokens.empty()) return {};
  auto attempt = [&](const std::string& norm) -> GpuMatch {
    auto hits = exact_matches(specs_, norm);
    auto def = defaults_.find(norm);
    if (hits.size() == 1 && def == defaults_.end()) return {hits.front(), {}, {}, 1};
    if (def != defaults_.end()) {
      auto it = std::find_if(specs_.begin(), specs_.end(),
                             [&](const GpuSpec& s) { return s.id == def->second; });
      if (it != specs_.end()) {
        // Name the other parts of the family (ids holding the leading token: b200 also
        // names gb200) so the user can choose.
        std::vector<std::string> others;
        const std::string family = tokens.front();
        for (const auto& s : specs_) {
          if (&s != &*it && normalize_gpu_name(s.id).find(family) != std::string::npos)
            others.push_back(s.id);
        }
        std::string note =
            fmt::format("'{}' names several parts; using {} ({})", query, it->id, it->name);
        if (!others.empty())
          note += fmt::format("; give {} {} to choose another", input_phrase(Input::kGpu),
                              fmt::join(others, " or " + input_phrase(Input::kGpu) + " "));
        return {&*it, note, {}, 1};
      }
    }
    if (hits.size() > 1) {
      // Ambiguous with no documented default: caller reports.
      return {nullptr, {}, {}, 1};
    }
    return {};
  };
  GpuMatch m = attempt(join(tokens));
  if (m.spec) return m;
  std::vector<std::string> stripped;
  for (const auto& t : tokens)
    if (!is_memory_token(t)) stripped.push_back(t);
  if (!stripped.empty() && stripped.size() != tokens.size()) {
    m = attempt(join(stripped));
    if (m.spec) return m;
  }
  // A descriptive name ("NVIDIA Blackwell GPU (GB200)", "Tesla V100-DGXS-32GB"): one of its
  // words names exactly one part. Not where a word marks a variant with other peaks ("RTX
  // 4090 D" has 114 of the 4090's 128 SMs).
  static const std::set<std::string> kVariants = {"d",   "ti", "super", "laptop", "mobile",
                                                  "max", "q",  "s",     "m",      "x",
                                                  "se",  "le", "lite",  "mini"};
  for (const auto& t : stripped)
    if (kVariants.count(t)) return {};
  const GpuSpec* found = nullptr;
  std::string word;
  for (const auto& t : stripped) {
    const GpuMatch w = attempt(t);
    if (!w.spec || w.spec == found) continue;
    if (found) return {};  // two parts named: not a guess to make
    found = w.spec;
    word = t;
  }
  if (!found) return {};
  return {
      found,
      fmt::format("'{}' read as {} ({}), from its word '{}'", query, found->id, found->name, word),
      {},
      1};
}

std::vector<std::string> GpuDatabase::suggestions(std::string_view query, std::size_t n) const {
  const std::string norm = normalize_gpu_name(query);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& s : specs_) {
    std::size_t best = detail::edit_distance(norm, normalize_gpu_name(s.id));
    for (const auto& a : s.aliases)
      best = std::min(best, detail::edit_distance(norm, normalize_gpu_name(a)));
    if (!norm.empty() && detail::starts_with(normalize_gpu_name(s.id), norm)) best = 0;
    scored.emplace_back(best, s.id);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && out.size() < n; ++i) out.push_back(scored[i].second);
  return out;
}

GpuMatch GpuDatabase::resolve(std::string_view query) const {
  GpuMatch m = try_resolve(query);
  if (m.spec) return m;
  const std::string norm = normalize_gpu_name(query);
  auto hits = exact_matches(specs_, norm);
  if (hits.size() > 1) {
    std::vector<std::string> ids;
    for (const auto* h : hits) ids.push_back(h->id);
    throw Error(
        fmt::format("GPU '{}' matches several accelerators: {}", query, fmt::join(ids, ", ")),
        fmt::format("give one of them, e.g. {} {}", input_phrase(Input::kGpu), ids.front()));
  }
  throw Error(
      fmt::format("unknown GPU '{}'; closest: {}", query, fmt::join(suggestions(query), ", ")),
      fmt::format("run 'mfu gpus' for the list, give {} yourself, or add the accelerator with {}",
                  input_phrase(Input::kPeak), input_phrase(Input::kGpuDb)));
}

}  // namespace mfu
