// Step-time estimate from analytical models when there is no log: compute at an assumed share
// of the peak, tensor-parallel all-reduces, the pipeline bubble, the data-parallel gradient
// all-reduce (partly overlapped), and the checkpoint/failure loss.
#include <fmt/format.h>

#include <cmath>

#include "mfu/error.hpp"
#include "mfu/flops.hpp"
#include "mfu/inputs.hpp"
#include "mfu/units.hpp"
#include "mfu/whatif.hpp"

namespace mfu {
namespace {

bool is_whole(double v) {
  return std::isfinite(v) && v >= 1 && std::fabs(v - std::round(v)) < 1e-9;
}

void require_whole(double v, Input input) {
  if (!is_whole(v))
    throw Error(fmt::format("{} must be a whole number >= 1, got {}", input_phrase(input),
                            format_number(v, 6)));
}

}  // namespace

std::string estimate_layout_problem(const EstimateInputs& in) {
  if (!is_whole(in.gpus))
    return fmt::format("{} must be a whole number >= 1, got {}", input_phrase(Input::kGpus),
                       format_number(in.gpus, 6));
  const double model_par = in.tp * in.pp * in.cp;
  const double dp = in.gpus / model_par;
  if (!is_whole(dp))
    return fmt::format("{} GPUs are not a multiple of tp x pp x cp = {}", format_number(in.gpus, 6),
                       format_number(model_par, 6));
  if (!(in.global_batch > 0))
    return fmt::format("{} (sequences per step) is needed", input_phrase(Input::kBatch));
  const double m = in.global_batch / (in.micro_batch * dp);
  if (!is_whole(m))
    return fmt::format(
        "global batch {} is not a multiple of micro-batch {} x data-parallel {} = {}",
        format_number(in.global_batch, 6), format_number(in.micro_batch, 6), format_number(dp, 6),
        format_number(in.micro_batch * dp, 6));
  return {};
}

StepEstimate estimate_step(const EstimateInputs& in) {
  require_whole(in.tp, Input::kTp);
  require_whole(in.pp, Input::kPp);
  require_whole(in.cp, Input::kCp);
  require_whole(in.vpp, Input::kVpp);
  require_whole(in.micro_batch, Input::kMicroBatch);
  if (const std::string why = estimate_layout_problem(in); !why.empty())
    throw Error(why, fmt::format("choose {}, {}, {}, {}, {} and {} that divide evenly",
                                 input_phrase(Input::kGpus), input_phrase(Input::kTp),
                                 input_phrase(Input::kPp), input_phrase(Input::kCp),
                                 input_phrase(Input::kMicroBatch), input_phrase(Input::kBatch)));
  if (!(in.kernel_efficiency > 0 && in.kernel_efficiency <= 1))
    throw Error(fmt::format("{} must be a share between 0% and 100%",
                            input_phrase(Input::kKernelEfficiency)));
  if (!(in.overlap >= 0 && in.overlap <= 1))
    throw Error(
        fmt::format("{} must be a share between 0% and 100%", input_phrase(Input::kOverlap)));
  if (!(in.grad_compression >= 1))
    throw Error(fmt::format("{} must be a ratio >= 1 (4 = a quarter of the bytes)",
                            input_phrase(Input::kGradCompression)));
  double peak = kUnknown;
  if (in.peak) {
    peak = *in.peak;
  } else if (in.gpu) {
    const auto pk = in.gpu->dense_peak(Dtype::kBf16);
    if (!pk)
      throw Error(fmt::format("{} has no published dense bf16 peak", in.gpu->name),
                  fmt::format("give {}", input_phrase(Input::kPeak)));
    peak = *pk;
  }
  if (!(peak > 0))
    throw Error(
        "the accelerator is unknown",
        fmt::format("give {} or {}", input_phrase(Input::kGpu), input_phrase(Input::kPeak)));
  const std::int64_t seq = in.model.seq_len;
  if (seq <= 0)
    throw Error("the sequence length is unknown",
                fmt::format("give {}", input_phrase(Input::kSeqLen)));

  StepEstimate e;
  const double dp = in.gpus / (in.tp * in.pp * in.cp);
  const double m = in.global_batch / (in.micro_batch * dp);
  e.dp = dp;
  e.micro_batches = m;
  const FlopsPerToken fpt = training_flops_per_token(in.model, in.convention, in.recompute, seq);
  const double tokens = in.global_batch * static_cast<double>(seq);
  const double model_flops = fpt.model * tokens;
  const double hw_flops = fpt.hardware * tokens;
  e.ideal_s = model_flops / (in.gpus * peak);
  e.compute_s = hw_flops / (in.gpus * peak * in.kernel_efficiency);
  e.lines.push_back(
      fmt::format("compute: {}/token x {} tokens{} / ({} GPUs x {} x {} kernel efficiency) = {}",
                  format_flops(fpt.model), format_count(tokens),
                  fpt.hardware > fpt.model
                      ? fmt::format(" (+{} recomputed)", format_flops(fpt.hardware - fpt.model))
                      : "",
                  format_number(in.gpus, 6), format_flop_rate(peak),
                  format_percent(in.kernel_efficiency, 0), format_duration(e.compute_s)));

  const double intra_bw = in.intra_node_bw ? *in.intra_node_bw
                                           : (in.gpu && in.gpu->interconnect_bandwidth > 0
                                                  ? in.gpu->interconnect_bandwidth / 2
                                                  : in.inter_node_bw);
  // Tensor parallelism (Narayanan et al. 2021 Sec. 3.2; Korthikanti et al. 2022): two all-reduces
  // of the b x s x h activations in the forward pass of each layer and two in the backward pass,
  // two more when the forward is recomputed in full.
  if (in.tp > 1 && in.model.hidden > 0) {
    const double bytes = in.micro_batch * static_cast<double>(seq) / in.cp *
                         static_cast<double>(in.model.hidden) * 2.0;
    const double bw = in.tp <= in.gpus_per_node ? intra_bw : in.inter_node_bw;
    const double per_op = ring_allreduce_s(bytes, in.tp, bw);
    const double ops_per_layer = in.recompute == Recompute::kFull ? 6.0 : 4.0;
    const double layers = static_cast<double>(in.model.layers) / in.pp;
    e.tp_comm_s = layers * m * ops_per_layer * per_op;
    e.lines.push_back(
        fmt::format("tensor-parallel: {} layers x {} micro-batches x {} all-reduces x 2(n-1)/n x "
                    "{} / {} (n={}) = {}",
                    format_number(layers, 4), format_number(m, 6), format_number(ops_per_layer, 2),
                    format_bytes(bytes), format_bandwidth(bw), format_number(in.tp, 4),
                    format_duration(e.tp_comm_s)));
  }
  // Pipeline bubble: (p-1)/(v*m) of the pipelined work (Narayanan et al. 2021 Sec. 2.2).
  const double work = e.compute_s + e.tp_comm_s;
  if (in.pp > 1) {
    const double f = pipeline_bubble_fraction(in.pp, m, in.vpp);
    e.bubble_s = work * f / (1.0 - f);
    e.lines.push_back(fmt::format("pipeline bubble: (p-1)/(v*m) = {}/({}x{}) of {} = {}",
                                  format_number(in.pp - 1, 4), format_number(in.vpp, 3),
                                  format_number(m, 6), format_duration(work),
                                  format_duration(e.bubble_s)));
  }
  // Data parallelism: the gradient all-reduce (or reduce-scatter + all-gather, the same volume)
  // of this GPU's parameter shard; across nodes the NIC is the ring's slowest link.
  if (dp > 1) {
    const double params = in.model.params ? *in.model.params : count_params(in.model).total;
    const double bytes = params / (in.tp * in.pp) * in.grad_bytes / in.grad_compression;
    const bool in_node = in.tp * in.cp * dp <= in.gpus_per_node;
    const double bw = in_node ? intra_bw : in.inter_node_bw;
    e.dp_comm_s = ring_allreduce_s(bytes, dp, bw);
    e.dp_exposed_s = e.dp_comm_s * (1.0 - in.overlap);
    e.lines.push_back(fmt::format(
        "data-parallel: 2(n-1)/n x {} of gradients{} / {} ({}, n={}) = {}; {} hidden -> {} exposed",
        format_bytes(bytes),
        in.grad_compression > 1
            ? fmt::format(" (compressed {}x)", format_number(in.grad_compression, 3))
            : "",
        format_bandwidth(bw), in_node ? "within a node" : "across nodes", format_number(dp, 6),
        format_duration(e.dp_comm_s), format_percent(in.overlap, 0),
        format_duration(e.dp_exposed_s)));
  }
  e.step_time_s = work + e.bubble_s + e.dp_exposed_s;
  e.mfu = e.ideal_s / e.step_time_s;
  e.tokens_per_s = tokens / e.step_time_s;
  if (in.checkpoint_s && in.mtbf_s) {
    e.checkpoint_interval_s = daly_interval_s(*in.checkpoint_s, *in.mtbf_s);
    e.failure_loss_fraction = checkpoint_loss_fraction(*e.checkpoint_interval_s, *in.checkpoint_s,
                                                       *in.mtbf_s, in.restart_s);
    e.lines.push_back(
        fmt::format("checkpoints: Daly interval sqrt(2 x {} x {}) (+ higher-order terms) = {}; "
                    "expected loss d/tau + (tau/2 + "
                    "restart {})/MTBF = {}",
                    format_duration(*in.checkpoint_s), format_duration(*in.mtbf_s),
                    format_duration(*e.checkpoint_interval_s), format_duration(in.restart_s),
                    format_percent(*e.failure_loss_fraction)));
  }
  return e;
}

}  // namespace mfu

namespace mfu {

std::vector<ScalingPoint> scaling_at_fixed_batch(const EstimateInputs& in,
                                                 const std::vector<double>& factors) {
  std::vector<ScalingPoint> out;
  for (double f : factors) {
    EstimateInputs e = in;
    e.gpus = in.gpus * f;
    if (!estimate_layout_problem(e).empty()) continue;
    out.push_back({e.gpus, estimate_step(e)});
  }
  return out;
}

}  // namespace mfu
