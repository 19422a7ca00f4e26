#pragma once
/// Training FLOPs per token under the conventions public tools use. They disagree by up to 12%
/// on the same run (shared/reference/flop_conventions.md), so every report names its convention.
///
/// **Example**:
///   auto m = mfu::ModelCatalog::builtin().get("llama3-8b");
///   auto f = mfu::training_flops_per_token(m, mfu::Convention::kPalm, mfu::Recompute::kNone);
///   // f.model ~ 5.79e10 FLOP/token at T = 8192

#include <cstdint>
#include <string>
#include <string_view>

#include "mfu/model.hpp"

namespace mfu {

enum class Convention {
  kPalm,          ///< 6N + 12*L*H*Q*T (Chowdhery et al. 2022, App. B): the definition of MFU
  kMegatron,      ///< Megatron-LM per-GEMM count since 2025-03: GQA, SwiGLU, MoE, causal attention,
                  ///< logits
  kMegatron2024,  ///< Megatron-LM 2024 to 2025-02: per-GEMM, full (non-causal) attention, all
                  ///< layers MoE
  kMegatron2023,  ///< Megatron-LM 2023-11 closed form 60*L*h^2*(1 + g/5H + s/5h + V/10Lh)
  kMegatronDeepSpeed,  ///< Megatron-DeepSpeed throughput_calculator: MAC count, HFU-style with
                       ///< recompute
  kMaxText,  ///< MaxText calculate_tflops_training_per_device: per-GEMM, causal, router counted
  /// Conventions a framework printed before a fix, to reproduce its number (never MFU's own):
  kTorchtitan2024,        ///< torchtitan before 2024-04-26: the input embedding in 6N
  kMaxTextFullAttention,  ///< MaxText before its causal-attention change (PR 1988): full attention
};

/// Activation recomputation, for HFU. kUnspecified means the log did not say (HFU is not reported).
enum class Recompute { kUnspecified, kNone, kSelective, kFull };

[[nodiscard]] Convention parse_convention(std::string_view name);
[[nodiscard]] const char* to_string(Convention c);
[[nodiscard]] Recompute parse_recompute(std::string_view name);
[[nodiscard]] const char* to_string(Recompute r);

/// Training (forward + backward) FLOPs for one token.
struct FlopsPerToken {
  double model = 0;      ///< model FLOPs per token (MFU numerator), no recomputation
  double hardware = 0;   ///< model + recomputed FLOPs (HFU numerator); equals model for kNone
  double weights = 0;    ///< the dense/expert GEMM part (6N-like)
  double attention = 0;  ///< the attention-core part (QK^T and AV)
  double logits = 0;     ///< the output-projection part when counted separately (0 when inside 6N)
  std::int64_t seq_len = 0;
  Convention convention = Convention::kPalm;
  Recompute recompute = Recompute::kUnspecified;
  std::string formula;  ///< the formula used, with the numbers put in, for reports
  std::string note;     ///< e.g. "attention term omitted: no shape"
};

/// FLOPs per token for `shape` at `seq_len` (0 = shape.seq_len). Throws mfu::Error naming the
/// flags that are missing for the chosen convention.
[[nodiscard]] FlopsPerToken training_flops_per_token(const ModelShape& shape, Convention convention,
                                                     Recompute recompute, std::int64_t seq_len = 0);

}  // namespace mfu
