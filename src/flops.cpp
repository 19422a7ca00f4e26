#include "mfu/flops.hpp"

#include <fmt/format.h>

#include <cmath>

#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
#include "mfu/units.hpp"
#include "text.hpp"

namespace mfu {

Convention parse_convention(std::string_view name) {
  const std::string n = detail::to_lower(detail::trim(name));
  if (n == "palm" || n == "6n" || n == "nanogpt" || n == "torchtitan") return Convention::kPalm;
  if (n == "megatron" || n == "megatron-lm" || n == "mcore") return Convention::kMegatron;
  if (n == "megatron-2024" || n == "megatron2024") return Convention::kMegatron2024;
  if (n == "megatron-2023" || n == "megatron2023" || n == "megatron-old")
    return Convention::kMegatron2023;
  if (n == "megatron-deepspeed" || n == "megatron-ds" || n == "megads")
    return Convention::kMegatronDeepSpeed;
  if (n == "maxtext") return Convention::kMaxText;
  if (n == "torchtitan-2024" || n == "torchtitan-old") return Convention::kTorchtitan2024;
  if (n == "maxtext-full-attention" || n == "maxtext-old") return Convention::kMaxTextFullAttention;
  throw Error(fmt::format("unknown FLOP convention '{}'", name),
              "use one of palm (default), megatron, megatron-2024, megatron-2023, "
              "megatron-deepspeed, maxtext, torchtitan-2024, maxtext-full-attention");
}

const char* to_string(Convention c) {
  switch (c) {
    case Convention::kPalm: return "palm";
    case Convention::kMegatron: return "megatron";
    case Convention::kMegatron2024: return "megatron-2024";
    case Convention::kMegatron2023: return "megatron-2023";
    case Convention::kMegatronDeepSpeed: return "megatron-deepspeed";
    case Convention::kMaxText: return "maxtext";
    case Convention::kTorchtitan2024: return "torchtitan-2024";
    case Convention::kMaxTextFullAttention: return "maxtext-full-attention";
  }
  return "?";
}

Recompute parse_recompute(std::string_view name) {
  const std::string n = detail::to_lower(detail::trim(name));
  if (n == "none" || n == "no" || n == "off" || n == "false") return Recompute::kNone;
  if (n == "selective") return Recompute::kSelective;
  if (n == "full" || n == "uniform" || n == "block" || n == "true") return Recompute::kFull;
  if (n == "unknown") return Recompute::kUnspecified;
  throw Error(fmt::format("unknown recompute mode '{}'", name), "use none, selective or full");
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kUnspecified: return "unknown";
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

namespace {

/// The attention-core width per layer: H * (d_qk + d_v) / 2, which is H*Q for plain attention.
double attention_width(const ModelShape& s) {
  const double H = static_cast<double>(s.heads);
  if (s.is_mla()) {
    const double qk = static_cast<double>(s.qk_nope_head_dim + s.qk_rope_head_dim);
    const double v = static_cast<double>(s.v_head_dim > 0 ? s.v_head_dim : s.qk_nope_head_dim);
    return H * (qk + v) / 2.0;
  }
  return H * static_cast<double>(s.eff_head_dim());
}

/// "; the config's 131,072 positions are the longest it supports, not the training length".
std::string max_positions_note(const ModelShape& s) {
  if (s.max_positions <= 0) return "";
  return fmt::format(
      "; the config's max_position_embeddings ({}) is the longest sequence the model supports, "
      "not the length it trained at",
      s.max_positions);
}

/// The per-GEMM conventions count from the shape: a parameter count given beside it is not
/// theirs to use, and the count they report is the shape's.
void note_unused_params(const ModelShape& s, Convention c, FlopsPerToken& out) {
  if (!s.params) return;
  out.note = fmt::format(
      "the parameter count given ({}) is not used: the {} convention counts each matrix "
      "multiply from the shape",
      format_count(*s.params), to_string(c));
}

void require_seq_len(const ModelShape& s, Convention c, std::int64_t seq) {
  if (seq > 0) return;
  throw Error(fmt::format("the {} convention needs the training sequence length{}", to_string(c),
                          max_positions_note(s)),
              "give " + input_phrase(Input::kSeqLen));
}

void require_shape(const ModelShape& s, Convention c, bool need_vocab) {
  std::vector<std::string> missing;
  if (s.layers <= 0) missing.emplace_back("the layers");
  if (s.hidden <= 0) missing.emplace_back("the hidden size");
  if (s.heads <= 0) missing.emplace_back("the heads");
  if (need_vocab && s.vocab <= 0) missing.emplace_back("the vocabulary size");
  if (!missing.empty())
    throw Error(fmt::format("the {} FLOP convention needs the model shape; missing {}",
                            to_string(c), fmt::join(missing, ", ")),
                fmt::format("give {} or {}; the palm convention works with {} alone",
                            input_phrase(Input::kModel), input_phrase(Input::kShape),
                            input_phrase(Input::kParams)));
}

/// What every per-GEMM convention needs: the whole shape and the training length; a parameter
/// count given beside them is noted as unused.
void per_gemm_inputs(const ModelShape& s, Convention c, std::int64_t seq, FlopsPerToken& out) {
  require_shape(s, c, true);
  require_seq_len(s, c, seq);
  note_unused_params(s, c, out);
}

/// Per-token forward+backward GEMM FLOPs of the projections and MLPs, counted per GEMM (x6).
double per_gemm_weights(const ModelShape& s, bool count_router) {
  const double h = static_cast<double>(s.hidden);
  const double L = static_cast<double>(s.layers);
  double proj = 0;
  if (s.is_mla()) {
    // Same matrices as the parameter count (norm vectors excluded).
    const double H = static_cast<double>(s.heads);
    const double nope = static_cast<double>(s.qk_nope_head_dim);
    const double rope = static_cast<double>(s.qk_rope_head_dim);
    const double v = static_cast<double>(s.v_head_dim > 0 ? s.v_head_dim : s.qk_nope_head_dim);
    const double qr = static_cast<double>(s.q_lora_rank);
    const double kvr = static_cast<double>(s.kv_lora_rank);
    const double q = qr > 0 ? h * qr + qr * H * (nope + rope) : h * H * (nope + rope);
    proj = q + h * (kvr + rope) + kvr * H * (nope + v) + H * v * h;
  } else {
    const double q = static_cast<double>(s.heads * s.eff_head_dim());
    const double kv = static_cast<double>(s.eff_kv_heads() * s.eff_head_dim());
    proj = h * (q + 2.0 * kv) + q * h;
  }
  const double mats = s.gated_mlp ? 3.0 : 2.0;
  const double n_moe = static_cast<double>(s.moe_layers());
  const double n_dense = L - n_moe;
  const double dense_mlp = mats * h * static_cast<double>(s.eff_ffn());
  double moe_mlp = 0;
  if (s.is_moe()) {
    const double expert = mats * h * static_cast<double>(s.eff_moe_ffn());
    moe_mlp =
        static_cast<double>(s.top_k) * expert + static_cast<double>(s.shared_experts) * expert;
    if (count_router) moe_mlp += h * static_cast<double>(s.experts);
  }
  return 6.0 * (proj * L + dense_mlp * n_dense + moe_mlp * n_moe);
}

/// PaLM (Chowdhery et al. 2022, App. B): 6N plus the attention term 12*L*H*Q*T.
void palm_terms(const ModelShape& s, Convention /*c*/, std::int64_t seq, FlopsPerToken& out) {
  [[maybe_unused]] const double T = static_cast<double>(seq), L = static_cast<double>(s.layers),
                                h = static_cast<double>(s.hidden), V = static_cast<double>(s.vocab);
  // PaLM App. B: 6N for the weights plus 6*L*H*(2*Q*T) for dense (non-causal) attention.
  // The attention term needs only the layers, heads and head dimension (PaLM Table 3's
  // 540B row gives 46.2% from them with N given), not the hidden size.
  const ParamCount p = count_params(s);
  out.weights = 6.0 * p.matmul_active;
  if (s.has_attention_shape() && seq > 0) {
    out.attention = 12.0 * L * attention_width(s) * T;
    out.formula = fmt::format("6N + 12*L*H*Q*T = 6*{} + 12*{}*{}*{}", format_count(p.matmul_active),
                              s.layers, static_cast<std::int64_t>(attention_width(s)), seq);
  } else {
    out.note = s.has_attention_shape()
                   ? "attention term omitted: the training sequence length is unknown" +
                         max_positions_note(s) + " (give " + input_phrase(Input::kSeqLen) + ")"
                   : "attention term omitted: the layers, heads and head dimension are "
                     "unknown (6N only)";
    out.formula = fmt::format("6N = 6*{}", format_count(p.matmul_active));
  }
}

/// Megatron-LM num_floating_point_operations since 2025-03.
void megatron_terms(const ModelShape& s, Convention c, std::int64_t seq, FlopsPerToken& out) {
  [[maybe_unused]] const double T = static_cast<double>(seq), L = static_cast<double>(s.layers),
                                h = static_cast<double>(s.hidden), V = static_cast<double>(s.vocab);
  // Megatron-LM num_floating_point_operations (2025-03 onwards): per-GEMM count,
  // causal core attention 6*q*s per layer (half of PaLM's), logits 6*h*V, router omitted.
  per_gemm_inputs(s, c, seq, out);
  out.weights = per_gemm_weights(s, false);
  out.attention = 6.0 * L * attention_width(s) * T;
  out.logits = 6.0 * h * V;
  out.formula = "per-GEMM: 6*(QKV+proj+MLP) per layer + 6*q*s*L (causal) + 6*h*V";
}

/// Megatron-LM from 2024 to 2025-02.
void megatron2024_terms(const ModelShape& s, Convention c, std::int64_t seq, FlopsPerToken& out) {
  [[maybe_unused]] const double T = static_cast<double>(seq), L = static_cast<double>(s.layers),
                                h = static_cast<double>(s.hidden), V = static_cast<double>(s.vocab);
  // Megatron-LM ~2024 to 2025-02 (e.g. 131acc26): 12*L*h^2*[(1 + g/H + s/h)*(q/h)
  // + (f/h)*k*gated + (f_sh/h)*gated + V/(2*L*h)] per token, gated = 3/2 for SwiGLU;
  // non-causal attention and every layer counted as MoE when experts are set.
  per_gemm_inputs(s, c, seq, out);
  const double H = static_cast<double>(s.heads);
  const double g = static_cast<double>(s.eff_kv_heads());
  const double q = H * static_cast<double>(s.eff_head_dim());
  const double gated = s.gated_mlp ? 1.5 : 1.0;
  const double k = s.is_moe() ? static_cast<double>(s.top_k) : 1.0;
  const double f = static_cast<double>(s.is_moe() ? s.eff_moe_ffn() : s.eff_ffn());
  const double f_sh = static_cast<double>(s.shared_experts * s.eff_moe_ffn());
  const double base = 12.0 * L * h * h;
  out.weights = base * ((1.0 + g / H) * (q / h) + (f / h) * k * gated + (f_sh / h) * gated);
  out.attention = base * (T / h) * (q / h);
  out.logits = base * (V / (2.0 * L * h));
  out.formula = "12*L*h^2*[(1 + g/H + s/h)*(q/h) + (f/h)*k*gated + V/(2*L*h)]";
}

/// Megatron-DeepSpeed throughput_calculator.
void megatron_deepspeed_terms(const ModelShape& s, Convention c, std::int64_t seq,
                              FlopsPerToken& out) {
  [[maybe_unused]] const double T = static_cast<double>(seq), L = static_cast<double>(s.layers),
                                h = static_cast<double>(s.hidden), V = static_cast<double>(s.vocab);
  // microsoft/Megatron-DeepSpeed megatron/utils.py throughput_calculator: forward MACs
  // B*L*(1 + (2 // gqa) + 1)*h^2*s + B*L*2*d_head*H*s^2 + B*L*F*f*h*s*k + B*V*h*s, with the
  // integer division quirk 2 // (H/kv): K and V projections count 0 for gqa >= 3.
  per_gemm_inputs(s, c, seq, out);
  const double H = static_cast<double>(s.heads);
  const double gqa = H / static_cast<double>(s.eff_kv_heads());
  const double kv_term = std::floor(2.0 / gqa);
  const double F = s.gated_mlp ? 3.0 : 2.0;
  const double k = s.is_moe() ? static_cast<double>(s.top_k) : 1.0;
  const double f = static_cast<double>(s.is_moe() ? s.eff_moe_ffn() : s.eff_ffn());
  const double dh = static_cast<double>(s.eff_head_dim());
  // x2 FLOPs per MAC, x3 for forward + backward.
  out.weights = 6.0 * (L * (2.0 + kv_term) * h * h + L * F * f * h * k);
  out.attention = 6.0 * L * 2.0 * dh * H * T;
  out.logits = 6.0 * V * h;
  out.formula = "2*3*[L*(2 + 2//gqa)*h^2 + L*2*d_head*H*s + L*F*f*h*k + V*h] per token";
}

/// Megatron-LM 2023-11 closed form.
void megatron2023_terms(const ModelShape& s, Convention c, std::int64_t seq, FlopsPerToken& out) {
  [[maybe_unused]] const double T = static_cast<double>(seq), L = static_cast<double>(s.layers),
                                h = static_cast<double>(s.hidden), V = static_cast<double>(s.vocab);
  // Megatron-LM 2023-11 (2748e7c7): 60*L*h^2*(1 + g/(5H) + s/(5h) + V/(10*L*h)) per token.
  per_gemm_inputs(s, c, seq, out);
  const double g = static_cast<double>(s.eff_kv_heads());
  const double H = static_cast<double>(s.heads);
  const double base = 60.0 * L * h * h;
  out.weights = base * (1.0 + g / (5.0 * H));
  out.attention = base * (T / (5.0 * h));
  out.logits = base * (V / (10.0 * L * h));
  out.formula = "60*L*h^2*(1 + g/(5H) + s/(5h) + V/(10*L*h))";
}

/// torchtitan before 2024-04-26: the input embedding in 6N.
void torchtitan2024_terms(const ModelShape& s, Convention /*c*/, std::int64_t seq,
                          FlopsPerToken& out) {
  [[maybe_unused]] const double T = static_cast<double>(seq), L = static_cast<double>(s.layers),
                                h = static_cast<double>(s.hidden), V = static_cast<double>(s.vocab);
  // torchtitan before 2024-04-26 (its get_num_flop_per_token took every parameter, the
  // input embedding's lookup table included): 6 x (N + V x h) + 12*L*H*Q*T.
  const ParamCount p = count_params(s);
  const double table = s.tied_embeddings ? 0.0 : p.embedding;
  out.weights = 6.0 * (p.matmul_active + table);
  if (s.has_attention_shape() && seq > 0) out.attention = 12.0 * L * attention_width(s) * T;
  out.formula = "6*(N + embedding) + 12*L*H*Q*T";
}

/// MaxText calculate_tflops_training_per_device: per-GEMM with the MoE router counted, causal
/// attention 1/2 * 4*T*H*Q per layer forward (x3 for training), unembedding 2*d*V; before its
/// PR 1988 (maxtext-full-attention) the attention core without the causal halving.
void maxtext_terms(const ModelShape& s, Convention c, std::int64_t seq, FlopsPerToken& out) {
  [[maybe_unused]] const double T = static_cast<double>(seq), L = static_cast<double>(s.layers),
                                h = static_cast<double>(s.hidden), V = static_cast<double>(s.vocab);
  const bool full = c == Convention::kMaxTextFullAttention;
  per_gemm_inputs(s, c, seq, out);
  out.weights = per_gemm_weights(s, true);
  out.attention = (full ? 12.0 : 6.0) * L * attention_width(s) * T;
  out.logits = 6.0 * h * V;
  out.formula = full ? "3*(FFN + QKV + proj + router + 2*d*V) + 3*(4*T*H*Q)*L (full attention)"
                     : "3*(FFN + QKV + proj + router + 2*d*V) + 3*(2*T*H*Q)*L (causal)";
}

}  // namespace

FlopsPerToken training_flops_per_token(const ModelShape& s, Convention c, Recompute r,
                                       std::int64_t seq_len_arg) {
  validate_shape(s);
  FlopsPerToken out;
  out.convention = c;
  out.recompute = r;
  const std::int64_t seq = seq_len_arg > 0 ? seq_len_arg : s.seq_len;
  out.seq_len = seq;
  switch (c) {
    case Convention::kPalm: palm_terms(s, c, seq, out); break;
    case Convention::kMegatron: megatron_terms(s, c, seq, out); break;
    case Convention::kMegatron2024: megatron2024_terms(s, c, seq, out); break;
    case Convention::kMegatronDeepSpeed: megatron_deepspeed_terms(s, c, seq, out); break;
    case Convention::kMegatron2023: megatron2023_terms(s, c, seq, out); break;
    case Convention::kTorchtitan2024: torchtitan2024_terms(s, c, seq, out); break;
    case Convention::kMaxText:
    case Convention::kMaxTextFullAttention: maxtext_terms(s, c, seq, out); break;
  }
  out.model = out.weights + out.attention + out.logits;
  switch (r) {
    case Recompute::kUnspecified:
    case Recompute::kNone: out.hardware = out.model; break;
    case Recompute::kSelective:
      if (c == Convention::kMegatronDeepSpeed) {
        // throughput_calculator adds the attention bgemm once more (forward only).
        out.hardware = out.model + out.attention / 3.0;
        break;
      }
      // Korthikanti et al. 2022, Sec. 5: selective recomputation re-runs the attention core;
      // the paper's HFU formula adds the attention-core term once more (HFU/MFU ~ 1 + s/6h).
      out.hardware = out.model + out.attention;
      break;
    case Recompute::kFull: {
      if (c == Convention::kMegatronDeepSpeed) {
        // throughput_calculator: checkpoint_activations_factor 4 instead of 3, logits included.
        out.hardware = out.model * 4.0 / 3.0;
        break;
      }
      // Narayanan et al. 2021, Eq. 3: full recomputation adds one forward pass (1/3 of
      // forward+backward) of every transformer layer; the logit layer is not recomputed.
      double logit_part = out.logits;
      if (c == Convention::kPalm && s.vocab > 0 && s.hidden > 0)
        logit_part = 6.0 * static_cast<double>(s.hidden) * static_cast<double>(s.vocab);
      out.hardware = out.model + (out.model - logit_part) / 3.0;
      break;
    }
  }
  return out;
}

}  // namespace mfu
