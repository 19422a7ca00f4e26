// The versioned JSON report of `mfu analyze` (the baseline format of `mfu check`).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/resolve.hpp"
#include "report/analysis_common.hpp"
#include "report/json_numbers.hpp"

namespace mfu::detail {
namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json dist(const Distribution& d) {
  return {{"mean", num(d.mean)}, {"median", num(d.median)}, {"p05", num(d.p05)},
          {"p95", num(d.p95)},   {"min", num(d.min)},       {"max", num(d.max)},
          {"mad", num(d.mad)},   {"count", d.count}};
}

}  // namespace

void render_analysis_json(const Analysis& a, const Run& run, const RenderOptions& o,
                          std::ostream& out) {
  nlohmann::json j;
  j["schema_version"] = kJsonSchemaVersion;
  j["tool"] = "mfu";
  j["format"] = a.format;
  j["inputs"] = a.inputs;
  j["mfu"] = opt(a.mfu);
  j["hfu"] = opt(a.hfu);
  j["mfu_steady"] = opt(a.mfu_steady);
  j["gpu"] = a.gpu.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.gpu);
  j["gpus"] = json_count(a.gpus);
  j["per_gpu"] = a.per_gpu;
  if (!a.framework_disagreement.empty()) j["framework_disagreement"] = a.framework_disagreement;
  j["dtype"] = a.dtype;
  j["peak_flops_per_s_per_gpu"] = num(a.peak_flops_per_gpu);
  j["achieved_flops_per_s_per_gpu"] = opt(a.achieved_flops_per_s_per_gpu);
  j["achieved_flops_per_s_per_gpu_steady"] = opt(a.achieved_flops_per_s_per_gpu_steady);
  j["tokens_per_s"] = opt(a.tokens_per_s);
  j["tokens_per_s_per_gpu"] = opt(a.tokens_per_s_per_gpu);
  j["wall_time_s"] = a.wall_time_s;
  j["wall_time_source"] = a.clock_source;
  j["mfu_time_s"] = a.mfu_time_s;
  j["records_left_out"] = {{"impossible", a.outlier_records},
                           {"flops_unknown", a.flops_left_out},
                           {"flops_from_configuration", a.flops_filled}};
  j["gpu_hours"] = a.gpu_hours;
  j["convention"] = a.convention;
  j["recompute"] = a.recompute;
  j["flops_source"] =
      a.flops_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.flops_source);
  j["model_flops_per_token"] = num(a.model_flops_per_token);
  j["total_model_flops"] = num(a.total_model_flops);
  j["total_tokens"] = num(a.total_tokens);
  j["iterations"] = {{"total", a.iterations_total},
                     {"analyzed", a.iterations_analyzed},
                     {"warmup", a.warmup_iterations}};
  j["warmup_time_s"] = a.warmup_time_s;
  j["step_time_s"] = dist(a.step_time);
  j["mfu_per_iteration"] = dist(a.mfu_per_iteration);
  j["buckets"] = nlohmann::json::array();
  for (const auto& b : a.buckets) {
    nlohmann::json e{{"name", b.name},           {"label", b.label},
                     {"seconds", b.seconds},     {"fraction", b.fraction},
                     {"gpu_hours", b.gpu_hours}, {"source", to_string(b.source)},
                     {"detail", b.detail},       {"mfu_gain", b.mfu_gain}};
    if (b.cost) e["cost_usd"] = *b.cost;
    if (b.energy_kwh) e["energy_kwh"] = *b.energy_kwh;
    j["buckets"].push_back(e);
  }
  nlohmann::json stalls{
      {"count", a.stalls.count},
      {"threshold_s", num(a.stalls.threshold_s)},
      {"excess_s", a.stalls.excess_s},
      {"period_steps",
       a.stalls.period_steps ? nlohmann::json(*a.stalls.period_steps) : nlohmann::json(nullptr)},
      {"period_cause", a.stalls.period_cause},
      {"worst", nlohmann::json::array()}};
  for (const auto& s : a.stalls.worst)
    stalls["worst"].push_back({{"step", s.step},
                               {"time_s", s.time_s},
                               {"excess_s", s.excess_s},
                               {"line", s.line},
                               {"cause", s.cause}});
  j["stalls"] = stalls;
  j["goodput"] = opt(a.goodput);
  j["restarts"] = a.restarts;
  j["steps_lost"] = a.steps_lost;
  j["fixes"] = nlohmann::json::array();
  for (const auto& f : a.fixes)
    j["fixes"].push_back({{"bucket", f.bucket},
                          {"seconds", f.seconds},
                          {"mfu_gain", f.mfu_gain},
                          {"advice", f.advice}});
  j["attribution_hint"] = a.attribution_hint;
  j["framework"] = {{"flops_per_s_per_gpu", opt(a.framework_flops_per_s_per_gpu)},
                    {"mfu_steady", opt(a.framework_mfu_steady)},
                    {"printed_mfu", opt(a.framework_printed_mfu)},
                    {"convention", a.framework_convention},
                    {"recomputed_flops_per_s_per_gpu", opt(a.recomputed_flops_per_s_per_gpu)},
                    {"agreement", opt(a.framework_agreement)}};
  j["cost_usd"] = opt(a.total_cost);
  j["energy_kwh"] = opt(a.total_energy_kwh);
  j["inputs_used"] = nlohmann::json::array();
  for (const auto& u : a.used)
    j["inputs_used"].push_back({{"name", u.name}, {"value", u.value}, {"source", u.source}});
  j["unknowns"] = a.unknowns;
  // The reader's warnings (what stderr shows) first, then the analysis's own.
  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& d : run.diagnostics) {
    if (d.severity == Diagnostic::Severity::kInfo) continue;
    const std::string where = d.line ? fmt::format("{}:{}: ", d.file, d.line)
                                     : (d.file.empty() ? std::string() : d.file + ": ");
    warnings.push_back(where + d.message);
  }
  if (run.suppressed_diagnostics > 0)
    warnings.push_back(
        fmt::format("{} more reader warnings not shown", run.suppressed_diagnostics));
  for (const auto& w : a.warnings) warnings.push_back(w);
  j["warnings"] = warnings;
  if (a.trace) {
    nlohmann::json t;
    t["ranks"] = nlohmann::json::array();
    for (const auto& r : a.trace->ranks) {
      nlohmann::json rj{
          {"rank", r.rank >= 0 ? nlohmann::json(r.rank) : nlohmann::json(nullptr)},
          {"rank_source", r.rank_source},
          {"file", r.file},
          {"device", r.device_name},
          {"world_size", r.world_size},
          {"steps", r.steps.size()},
          {"kernels", r.kernels},
          {"comm_kernels", r.comm_kernels},
          {"window_s", r.window_s},
          {"compute_s", r.compute_s},
          {"comm_s", r.comm_s},
          {"comm_exposed_s", r.comm_exposed_s},
          {"memory_exposed_s", r.memory_exposed_s},
          {"idle_s", r.idle_s},
          {"idle_host_s", r.idle_host_s},
          {"idle_data_s", r.idle_data_s},
          {"overlap_ratio", r.overlap_ratio},
          {"collective_wait_s", r.wait_s},
          {"collective_transfer_s", r.transfer_s},
          {"arrived_last", r.arrived_last},
          {"executed_flops", r.has_flops ? nlohmann::json(r.flops) : nlohmann::json(nullptr)}};
      rj["per_step"] = nlohmann::json::array();
      for (const auto& st : r.steps)
        rj["per_step"].push_back({{"step", st.step},
                                  {"wall_s", st.wall_s},
                                  {"compute_s", st.compute_s},
                                  {"comm_s", st.comm_s},
                                  {"comm_exposed_s", st.comm_exposed_s},
                                  {"memory_exposed_s", st.memory_exposed_s},
                                  {"idle_s", st.idle_s},
                                  {"idle_host_s", st.idle_host_s},
                                  {"collective_wait_s", st.wait_s},
                                  {"arrived_last", st.arrived_last}});
      t["ranks"].push_back(rj);
    }
    t["stragglers"] = a.trace->stragglers;
    t["straggler_reason"] = a.trace->straggler_reason;
    t["matched_collectives"] = a.trace->matched_collectives;
    t["unmatched_collectives"] = a.trace->unmatched_collectives;
    t["executed_flops"] = opt(a.trace_executed_flops);
    j["trace"] = t;
  }
  // A sample of steady step times: what `mfu check --baseline` compares against.
  j["step_time_sample_s"] = a.steady_step_times_s;
  j["steady_step_split_s"] = a.steady_step_split_s;
  j["mfu_sample"] = a.steady_mfu_sample;
  j["tokens_per_s_per_gpu_sample"] = a.steady_tokens_per_s_per_gpu_sample;
  if (o.per_iteration) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < run.iterations.size(); ++i) {
      const Iteration it = run.iterations[i];
      nlohmann::json r{{"step", it.step}, {"count", it.count}, {"time_s", num(it.time_s)}};
      r["mfu"] = num(iteration_mfu(a, it));
      r["tokens"] = num(iteration_tokens(a, it));
      r["model_flops"] = num(iteration_model_flops(a, it));
      if (known(it.loss)) r["loss"] = float_digits(it.loss);
      for (std::size_t p = 0; p < kPhaseCount; ++p)
        if (known(it.phase[p])) r[phase_key(static_cast<Phase>(p))] = it.phase[p];
      rows.push_back(std::move(r));
    }
    j["per_iteration"] = std::move(rows);
  }
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace mfu::detail
