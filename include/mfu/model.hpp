#pragma once
/// Transformer model shapes: presets from data/models.json, Hugging Face config.json files, and
/// shape flags; parameter counts computed from the shape.
///
/// **Example**:
///   auto catalog = mfu::ModelCatalog::builtin();
///   const mfu::ModelShape& m = catalog.get("llama3-8b");
///   mfu::ParamCount p = mfu::count_params(m);   // p.total ~ 8.03e9

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mfu {

/// A decoder-only transformer. Zero means "not known". Sizes are per the usual names:
/// hidden = d_model, ffn = MLP inner size, kv_heads = query groups (GQA).
struct ModelShape {
  std::string id;      ///< preset id, file name or "custom"
  std::string name;    ///< display name
  std::string source;  ///< where the shape comes from
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  ///< 0 = same as heads
  std::int64_t head_dim = 0;  ///< 0 = hidden / heads
  std::int64_t ffn = 0;       ///< 0 = 4 * hidden
  std::int64_t vocab = 0;
  std::int64_t seq_len = 0;  ///< the training length (a preset's, a log's or a flag's)
  /// The longest sequence a Hugging Face config supports (max_position_embeddings): the size
  /// of a learned position table, never taken for the training length.
  std::int64_t max_positions = 0;
  bool gated_mlp = false;          ///< SwiGLU/GeGLU: three h x f matrices instead of two
  bool tied_embeddings = false;    ///< output projection shares the input embedding
  bool learned_positions = false;  ///< GPT-2 style position table (a gather, not a matmul)
  bool biases = false;             ///< GPT-2 style biases on every linear layer
  bool qkv_bias = false;           ///< Qwen style bias on Q, K and V only
  // Mixture of experts
  std::int64_t experts = 0;             ///< routed experts (0 = dense)
  std::int64_t top_k = 0;               ///< experts per token
  std::int64_t moe_ffn = 0;             ///< expert MLP size (0 = ffn)
  std::int64_t shared_experts = 0;      ///< always-on experts of size moe_ffn
  std::int64_t first_dense_layers = 0;  ///< leading dense layers (DeepSeek first_k_dense_replace)
  std::int64_t moe_layer_freq = 1;      ///< every k-th layer is MoE (Megatron --moe-layer-freq)
  // Multi-head latent attention (DeepSeek-V2/V3)
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  /// N given directly (--params). When set, 6N uses it instead of the count from the shape.
  std::optional<double> params;
  /// The total the model's authors state (for a check against the computed count).
  std::optional<double> stated_params;

  [[nodiscard]] bool has_core_shape() const { return layers > 0 && hidden > 0 && heads > 0; }
  /// What PaLM's attention term 12*L*H*Q*T needs: layers, heads and the head dimension
  /// (given, or hidden / heads).
  [[nodiscard]] bool has_attention_shape() const {
    return layers > 0 && heads > 0 && (head_dim > 0 || hidden > 0 || is_mla());
  }
  [[nodiscard]] bool is_moe() const { return experts > 1 && top_k > 0; }
  [[nodiscard]] bool is_mla() const { return kv_lora_rank > 0; }
  [[nodiscard]] std::int64_t eff_kv_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  [[nodiscard]] std::int64_t eff_head_dim() const;
  [[nodiscard]] std::int64_t eff_ffn() const { return ffn > 0 ? ffn : 4 * hidden; }
  [[nodiscard]] std::int64_t eff_moe_ffn() const { return moe_ffn > 0 ? moe_ffn : eff_ffn(); }
  /// Number of MoE layers and dense layers.
  [[nodiscard]] std::int64_t moe_layers() const;
  [[nodiscard]] std::int64_t dense_layers() const { return layers - moe_layers(); }
  /// Names of the fields that are missing for a full per-GEMM FLOP count.
  [[nodiscard]] std::vector<std::string> missing_for_gemm_count() const;
};

/// Parameter counts. `matmul_active` is the N of 6N: parameters that take part in a matrix
/// multiply for one token (routed experts scaled by top_k/experts; the input embedding when
/// untied and learned position tables are gathers and excluded, as nanoGPT's estimate_mfu
/// and torchtitan do).
struct ParamCount {
  double total = 0;
  double active = 0;         ///< total with routed experts scaled by top_k/experts
  double embedding = 0;      ///< input token embedding
  double output = 0;         ///< separate output projection (0 when tied)
  double positions = 0;      ///< learned position table
  double matmul_active = 0;  ///< N used by 6N
  bool from_flag = false;    ///< N came from --params, not from the shape
};

/// Counts parameters from the shape. When `shape.params` is set it is used as N as given.
/// Throws mfu::Error when neither a shape nor params is known.
[[nodiscard]] ParamCount count_params(const ModelShape& shape);

/// Throws Error when the shape cannot describe a model: a non-positive parameter count,
/// experts without the experts per token (or more per token than there are), a hidden size
/// that the heads do not divide without a head dimension.
void validate_shape(const ModelShape& shape);

/// Model presets (data/models.json).
class ModelCatalog {
 public:
  [[nodiscard]] static const ModelCatalog& builtin();
  [[nodiscard]] const std::vector<ModelShape>& all() const { return models_; }
  /// Finds a preset by id or alias (case-insensitive, separators ignored); nullptr if none.
  [[nodiscard]] const ModelShape* find(std::string_view name) const;
  /// Like find() but throws mfu::Error with the closest names.
  [[nodiscard]] const ModelShape& get(std::string_view name) const;

 private:
  std::vector<ModelShape> models_;
  std::vector<std::vector<std::string>> aliases_;
};

/// Reads a Hugging Face `config.json` (Llama, Mistral/Mixtral, Qwen2, DeepSeek-V2/V3, GPT-2,
/// GPT-NeoX, OPT and similar). Throws mfu::Error naming the file and the missing keys.
[[nodiscard]] ModelShape load_hf_config(const std::string& path);
[[nodiscard]] ModelShape parse_hf_config(std::string_view json_text, const std::string& origin);

/// Resolves `--model`: a preset id, or a path to a config.json. Throws with suggestions.
[[nodiscard]] ModelShape resolve_model(const std::string& name_or_path);

}  // namespace mfu
