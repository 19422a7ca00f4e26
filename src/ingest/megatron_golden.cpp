// Megatron-LM functional-test golden values (tests/functional_tests/.../golden_values_*.json):
//   {"lm loss": {"start_step": 1, "end_step": 51000, "step_interval": 5, "values": {"1": 12.95,
//   ...}},
//    "iteration-time": {..., "values": {"1": "nan", "5": 1.23, ...}}, ...}
// iteration-time is seconds per iteration at the sampled steps; model_config.yaml beside the
// file gives the model shape.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "ingest/parser.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

double value_of(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    auto d = parse_double(v.get<std::string>());
    return d ? *d : kUnknown;
  }
  return kUnknown;
}

void parse(std::string_view text, RunBuilder& out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    out.malformed(1, "not a valid golden-values JSON object");
    return;
  }
  auto series = [&](const char* name) -> const nlohmann::json* {
    auto it = j.find(name);
    if (it == j.end() || !it->is_object()) return nullptr;
    auto v = it->find("values");
    return (v != it->end() && v->is_object()) ? &*v : nullptr;
  };
  const nlohmann::json* times = series("iteration-time");
  const nlohmann::json* loss = series("lm loss");
  if (!times) {
    out.info(1, "no 'iteration-time' series: the file has losses but no timing");
  }
  std::vector<std::pair<std::int64_t, double>> steps;
  if (times) {
    for (auto& [k, v] : times->items()) {
      auto s = parse_int(k);
      if (!s || *s < 0) continue;  // step keys are whole numbers >= 0
      const double t = value_of(v);
      if (!known(t)) continue;  // "nan" before the first timed step
      steps.emplace_back(*s, t);
    }
  }
  std::sort(steps.begin(), steps.end());
  std::size_t bad = 0;
  for (const auto& [s, t] : steps) {
    if (!(t > 0) || !std::isfinite(t)) {
      ++bad;
      continue;
    }
    Iteration it;
    it.step = s;
    it.time_s = t;
    it.line = 1;
    if (loss) {
      auto lv = loss->find(std::to_string(s));
      if (lv != loss->end()) it.loss = value_of(*lv);
    }
    out.add(it);
  }
  if (bad > 0)
    out.warn(1, fmt::format("{} iteration-time values are zero or negative and were skipped", bad));
}

double sniff_megatron_golden(std::string_view head, std::string_view) {
  // A JSON object: the model_config.yaml beside it lists the same metric names.
  if (trim(head).substr(0, 1) != "{") return 0;
  if (contains(head, "\"iteration-time\"") ||
      (contains(head, "\"lm loss\"") && contains(head, "\"step_interval\"")))
    return 8;
  return 0;
}

}  // namespace

const FormatSpec& megatron_golden_format() {
  static const FormatSpec spec{"megatron-golden",
                               "Megatron-LM CI golden-values JSON (iteration-time, lm loss)",
                               sniff_megatron_golden,
                               nullptr,
                               parse,
                               nullptr,
                               std::size_t{512} << 20,
                               TimingKind::kSampled};
  return spec;
}

}  // namespace mfu::detail
