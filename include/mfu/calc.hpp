#pragma once
/// `mfu calc`: solves the MFU identity for whatever is unknown.
///
///   MFU = model FLOPs per step / (step time * GPUs * peak per GPU)
///       = FLOPs per token * tokens per second / (GPUs * peak per GPU)
///
/// **Example** (the classic worked example):
///   mfu::CalcInputs in;
///   in.flops_per_step = 35e12; in.step_time_s = 0.330; in.gpus = 16; in.peak_flops = 19.5e12;
///   auto r = mfu::solve(in);   // r.mfu == 0.340 (34.0%)

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mfu/flops.hpp"
#include "mfu/gpu.hpp"
#include "mfu/model.hpp"

namespace mfu {

struct CalcInputs {
  std::optional<ModelShape> model;  ///< preset, config.json or shape flags
  Convention convention = Convention::kPalm;
  Recompute recompute = Recompute::kUnspecified;
  std::optional<double> batch;            ///< sequences per step (global)
  std::optional<double> tokens_per_step;  ///< global
  std::optional<double> flops_per_step;   ///< model FLOPs per step, all GPUs together
  std::optional<double> step_time_s;
  std::optional<double> tokens_per_s;  ///< global
  std::optional<std::string> gpu;      ///< name to look up in the database
  std::optional<double> peak_flops;    ///< per GPU, dense; overrides the database
  std::optional<Dtype> dtype;          ///< empty = bf16 (or fp16 where a part has no bf16)
  std::optional<double> gpus;
  std::optional<double> mfu;
  std::optional<double> train_tokens;
  std::optional<double> price_per_gpu_hour;
};

struct CalcResult {
  std::optional<double> mfu, hfu;
  std::optional<double> params, matmul_params;
  std::optional<double> model_flops_per_token, hardware_flops_per_token;
  std::optional<double> model_flops_per_step;
  std::optional<double> tokens_per_step;
  std::optional<double> achieved_flops_per_s_per_gpu;
  std::optional<double> peak_flops_per_s_per_gpu;
  std::optional<double> gpus;
  std::optional<double> step_time_s;
  std::optional<double> tokens_per_s;
  std::optional<double> train_time_s, gpu_hours, cost, energy_kwh;
  std::string gpu;  ///< resolved accelerator id (empty with --peak alone)
  std::string gpu_name;
  std::string dtype;
  std::string convention;
  std::string recompute;
  std::string flops_formula;
  std::optional<double> tdp_w;
  std::vector<std::string> notes;  ///< what was assumed or derived, one line each
};

/// Solves for everything the inputs determine. Throws mfu::Error when inputs disagree (naming
/// the two that do) or when MFU cannot be determined (naming what is missing), and
/// mfu::ImpossibleResult when MFU would exceed 100%.
[[nodiscard]] CalcResult solve(const CalcInputs& in,
                               const GpuDatabase& db = GpuDatabase::builtin());

/// Chooses the peak for `spec` and the requested dtype (default bf16, fp16 where the part
/// has no bf16). `note` says what was chosen. Throws mfu::Error when the part has no such peak.
[[nodiscard]] double choose_peak(const GpuSpec& spec, std::optional<Dtype> requested, Dtype* chosen,
                                 std::string* note);

}  // namespace mfu
