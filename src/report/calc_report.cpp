// Renders `mfu calc` results (text and JSON; markdown reuses the text lines in a table).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "mfu/error.hpp"
#include "mfu/report.hpp"
#include "mfu/units.hpp"
#include "report/json_numbers.hpp"

namespace mfu {
namespace {

void put(nlohmann::json& j, const char* key, const std::optional<double>& v) {
  if (v) j[key] = *v;
}

std::vector<std::pair<std::string, std::string>> calc_rows(const CalcResult& r) {
  std::vector<std::pair<std::string, std::string>> rows;
  auto add = [&](const std::string& k, const std::string& v) { rows.emplace_back(k, v); };
  if (r.mfu) add("MFU", format_percent(*r.mfu));
  if (r.hfu) add(fmt::format("HFU (recompute {})", r.recompute), format_percent(*r.hfu));
  if (r.achieved_flops_per_s_per_gpu)
    add("achieved per GPU", format_flop_rate(*r.achieved_flops_per_s_per_gpu));
  if (r.peak_flops_per_s_per_gpu) {
    std::string what =
        r.gpu.empty() ? std::string("given") : fmt::format("{} dense {}", r.gpu, r.dtype);
    add("peak per GPU",
        fmt::format("{} ({})", format_flop_rate(*r.peak_flops_per_s_per_gpu), what));
  }
  if (r.gpus) add("GPUs", format_number(*r.gpus, 6));
  if (r.step_time_s) add("step time", format_duration(*r.step_time_s));
  if (r.tokens_per_s) add("tokens/s", format_count(*r.tokens_per_s));
  if (r.tokens_per_step) add("tokens per step", format_count(*r.tokens_per_step));
  if (r.model_flops_per_step) add("model FLOPs per step", format_flops(*r.model_flops_per_step));
  if (r.model_flops_per_token) add("model FLOPs per token", format_flops(*r.model_flops_per_token));
  if (r.hardware_flops_per_token && r.hfu)
    add("hardware FLOPs per token", format_flops(*r.hardware_flops_per_token));
  if (r.params)
    add("parameters", fmt::format("{} (N in 6N: {})", format_count(*r.params),
                                  format_count(r.matmul_params.value_or(*r.params))));
  if (!r.flops_formula.empty())
    add("FLOP convention", fmt::format("{}: {}", r.convention, r.flops_formula));
  if (r.train_time_s) add("time to train", format_duration(*r.train_time_s));
  if (r.gpu_hours) add("GPU time", format_gpu_time(*r.gpu_hours));
  if (r.cost) add("cost", format_money(*r.cost));
  if (r.energy_kwh) add("energy (at TDP)", fmt::format("{} kWh", format_figure(*r.energy_kwh)));
  return rows;
}

}  // namespace

void render_calc(const CalcResult& r, OutputFormat format, const RenderOptions& options,
                 std::ostream& out) {
  switch (format) {
    case OutputFormat::kJson: {
      nlohmann::json j;
      j["schema_version"] = kJsonSchemaVersion;
      put(j, "mfu", r.mfu);
      put(j, "hfu", r.hfu);
      put(j, "params", r.params);
      put(j, "matmul_params", r.matmul_params);
      put(j, "model_flops_per_token", r.model_flops_per_token);
      put(j, "hardware_flops_per_token", r.hfu ? r.hardware_flops_per_token : std::nullopt);
      put(j, "model_flops_per_step", r.model_flops_per_step);
      put(j, "tokens_per_step", r.tokens_per_step);
      put(j, "achieved_flops_per_s_per_gpu", r.achieved_flops_per_s_per_gpu);
      put(j, "peak_flops_per_s_per_gpu", r.peak_flops_per_s_per_gpu);
      if (r.gpus) j["gpus"] = detail::json_count(*r.gpus);
      j["gpu"] = r.gpu.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.gpu);
      j["dtype"] = r.dtype;
      j["convention"] = r.convention;
      j["recompute"] = r.recompute;
      put(j, "step_time_s", r.step_time_s);
      put(j, "tokens_per_s", r.tokens_per_s);
      put(j, "train_time_s", r.train_time_s);
      put(j, "gpu_hours", r.gpu_hours);
      put(j, "cost_usd", r.cost);
      put(j, "energy_kwh", r.energy_kwh);
      j["notes"] = r.notes;
      out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      return;
    }
    case OutputFormat::kMarkdown: {
      out << "| quantity | value |\n|---|---|\n";
      for (const auto& [k, v] : calc_rows(r)) out << "| " << k << " | " << v << " |\n";
      for (const auto& n : r.notes) out << "\n> note: " << n << '\n';
      return;
    }
    case OutputFormat::kText: {
      const auto rows = calc_rows(r);
      std::size_t w = 0;
      for (const auto& [k, v] : rows) w = std::max(w, k.size());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const bool head = i == 0 && options.color;
        out << fmt::format("{:<{}}  {}{}{}\n", rows[i].first, w, head ? "\x1b[1m" : "",
                           rows[i].second, head ? "\x1b[0m" : "");
      }
      for (const auto& n : r.notes) out << "note: " << n << '\n';
      return;
    }
    default: throw Error("mfu calc writes text, json or markdown");
  }
}

}  // namespace mfu
