// Files that describe a run without timing it: MLPerf *_system.json (hardware) and Megatron-LM
// CI model_config.yaml (MODEL_ARGS with --num-layers, --hidden-size, ...). They are read next
// to a log and fill what the log does not say.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ingest/megatron_common.hpp"
#include "ingest/parser.hpp"
#include "ingest/system_json.hpp"
#include "text.hpp"

namespace mfu::detail {

void apply_system_json(const nlohmann::json& j, std::uint64_t line, RunBuilder& out) {
  if (!j.is_object()) return;
  auto str = [&](const char* k) -> std::string {
    auto it = j.find(k);
    return (it != j.end() && it->is_string()) ? it->get<std::string>() : std::string();
  };
  auto count = [&](const char* k) -> double {
    auto it = j.find(k);
    if (it == j.end()) return kUnknown;
    if (it->is_number()) return it->get<double>();
    if (it->is_string()) {
      auto d = parse_double(it->get<std::string>());
      return d ? *d : kUnknown;
    }
    return kUnknown;
  };
  const std::string acc = str("accelerator_model_name");
  if (!acc.empty()) out.meta("gpu_name", acc, line, false);
  const double per_node = count("accelerators_per_node");
  const double nodes = count("number_of_nodes");
  if (known(per_node) && known(nodes) && per_node > 0 && nodes > 0)
    out.meta("gpus", per_node * nodes, line, false);
  const std::string fw = str("framework");
  if (!fw.empty()) out.meta("framework", fw, line, false);
  const std::string name = str("system_name");
  if (!name.empty()) out.meta("system_name", name, line, false);
}

namespace {

void parse(std::string_view text, RunBuilder& out) {
  std::string_view t = trim(text);
  if (!t.empty() && t.front() == '{') {
    nlohmann::json j = nlohmann::json::parse(t, nullptr, false);
    if (j.is_discarded()) {
      out.malformed(1, "not valid JSON");
      return;
    }
    apply_system_json(j, 1, out);
    return;
  }
  // YAML: "  --num-layers: 32" lines (Megatron-LM tests/functional_tests model_config.yaml).
  std::uint64_t n = 0;
  for (auto line : split(text, '\n')) {
    ++n;
    std::string_view l = trim(line);
    const std::size_t hash = l.find(" #");
    if (hash != std::string_view::npos) l = trim(l.substr(0, hash));
    if (!starts_with(l, "--")) continue;
    const std::size_t colon = l.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = trim(l.substr(0, colon));
    std::string_view value = trim(l.substr(colon + 1));
    if (!value.empty() && (value.front() == '"' || value.front() == '\''))
      value = value.substr(1, value.size() - 2);
    if (value == "true") value = "True";
    apply_megatron_arg(key, value, n, out, false);
    if (key == "--step-batch-size-schedule" || key == "--rampup-batch-size")
      out.meta("batch_schedule", std::string(value), n, false);
  }
}

double sniff_metadata(std::string_view head, std::string_view filename) {
  if (contains(head, "\"accelerator_model_name\"") && contains(head, "\"accelerators_per_node\""))
    return 8;
  if (contains(head, "MODEL_ARGS:") && contains(head, "--num-layers")) return 8;
  (void)filename;
  return 0;
}

}  // namespace

const FormatSpec& metadata_format() {
  static const FormatSpec spec{
      "metadata",
      "MLPerf system.json or Megatron model_config.yaml (hardware/model only)",
      sniff_metadata,
      nullptr,
      parse,
      nullptr,
      std::size_t{16} << 20,
      TimingKind::kNone};
  return spec;
}

}  // namespace mfu::detail
