#include "mfu/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "embedded_data.hpp"
#include "json_fields.hpp"
#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
#include "text.hpp"

namespace mfu {

std::int64_t ModelShape::eff_head_dim() const {
  if (head_dim > 0) return head_dim;
  if (heads > 0 && hidden > 0) return hidden / heads;
  return 0;
}

std::int64_t ModelShape::moe_layers() const {
  if (!is_moe() || layers <= 0) return 0;
  std::int64_t count = 0;
  const std::int64_t freq = std::max<std::int64_t>(1, moe_layer_freq);
  for (std::int64_t i = first_dense_layers; i < layers; ++i)
    if ((i - first_dense_layers) % freq == 0) ++count;
  return count;
}

std::vector<std::string> ModelShape::missing_for_gemm_count() const {
  std::vector<std::string> m;
  if (layers <= 0) m.push_back(input_phrase(Input::kLayers));
  if (hidden <= 0) m.push_back(input_phrase(Input::kHidden));
  if (heads <= 0) m.push_back(input_phrase(Input::kHeads));
  if (vocab <= 0) m.push_back(input_phrase(Input::kVocab));
  return m;
}

void validate_shape(const ModelShape& s) {
  if (s.params && !(*s.params > 0 && std::isfinite(*s.params)))
    throw Error(fmt::format("the parameter count must be positive, got {}", *s.params),
                "give " + input_phrase(Input::kParams) + " as a count such as 8B");
  if (s.experts > 1 && s.top_k <= 0)
    throw Error(fmt::format("{} experts, but not how many each token is routed to (top-k): "
                            "without it the model would be counted as dense",
                            s.experts),
                "give the experts per token (top-k)");
  if (s.top_k > 0 && s.top_k > std::max<std::int64_t>(s.experts, 1))
    throw Error(
        fmt::format("{} experts per token, but the model has {} experts", s.top_k, s.experts),
        "the experts per token (top-k) must be at most the number of experts");
  if (s.heads > 0 && s.hidden > 0 && s.head_dim <= 0 && !s.is_mla() && s.hidden % s.heads != 0)
    throw Error(
        fmt::format("the hidden size {} is not a multiple of the {} heads", s.hidden, s.heads),
        "give the head dimension, or check the hidden size and the heads");
}

ParamCount count_params(const ModelShape& s) {
  validate_shape(s);
  ParamCount p;
  if (s.params) {
    p.total = p.active = p.matmul_active = *s.params;
    p.from_flag = true;
    return p;
  }
  if (!s.has_core_shape()) {
    std::vector<std::string> missing;
    if (s.layers <= 0) missing.emplace_back("layers");
    if (s.hidden <= 0) missing.emplace_back("hidden size");
    if (s.heads <= 0) missing.emplace_back("heads");
    throw Error(
        fmt::format("the model size is unknown: counting N needs the layers, hidden size and "
                    "heads (missing: {}){}",
                    fmt::join(missing, ", "),
                    s.has_attention_shape()
                        ? "; the layers, heads and head dimension give only the attention term"
                        : ""),
        fmt::format("give {}, {}, or {}", input_phrase(Input::kModel), input_phrase(Input::kParams),
                    input_phrase(Input::kShape)));
  }
  const double h = static_cast<double>(s.hidden);
  const double H = static_cast<double>(s.heads);
  const double g = static_cast<double>(s.eff_kv_heads());
  const double Q = static_cast<double>(s.eff_head_dim());
  const double norm = s.biases ? 2.0 * h : h;  // LayerNorm has weight+bias, RMSNorm weight only

  double attn = 0;
  if (s.is_mla()) {
    const double nope = static_cast<double>(s.qk_nope_head_dim);
    const double rope = static_cast<double>(s.qk_rope_head_dim);
    const double v = static_cast<double>(s.v_head_dim > 0 ? s.v_head_dim : s.qk_nope_head_dim);
    const double qr = static_cast<double>(s.q_lora_rank);
    const double kvr = static_cast<double>(s.kv_lora_rank);
    const double q_proj = qr > 0 ? h * qr + qr + qr * H * (nope + rope) : h * H * (nope + rope);
    const double kv_proj = h * (kvr + rope) + kvr + kvr * H * (nope + v);
    attn = q_proj + kv_proj + H * v * h;
  } else {
    attn = h * H * Q + 2.0 * h * g * Q + H * Q * h;
    if (s.biases) attn += H * Q + 2.0 * g * Q + h;
    if (s.qkv_bias) attn += H * Q + 2.0 * g * Q;
  }
  const double mats = s.gated_mlp ? 3.0 : 2.0;
  const double f = static_cast<double>(s.eff_ffn());
  double dense_mlp = mats * h * f;
  if (s.biases) dense_mlp += f + h;
  const double expert = mats * h * static_cast<double>(s.eff_moe_ffn());
  const double E = static_cast<double>(s.experts);
  const double k = static_cast<double>(s.top_k);
  const double shared = static_cast<double>(s.shared_experts) * expert;
  const double router = h * E;

  const double n_moe = static_cast<double>(s.moe_layers());
  const double n_dense = static_cast<double>(s.layers) - n_moe;
  const double per_layer_common = attn + 2.0 * norm;
  const double layers_total = static_cast<double>(s.layers) * per_layer_common +
                              n_dense * dense_mlp + n_moe * (E * expert + router + shared);
  const double layers_active = static_cast<double>(s.layers) * per_layer_common +
                               n_dense * dense_mlp + n_moe * (k * expert + router + shared);
  const double V = static_cast<double>(s.vocab);
  p.embedding = V * h;
  p.output = s.tied_embeddings ? 0.0 : V * h;
  // A learned position table has a row per position the model supports.
  const double positions = static_cast<double>(s.max_positions > 0 ? s.max_positions : s.seq_len);
  p.positions = s.learned_positions ? positions * h : 0.0;
  const double final_norm = norm;
  p.total = layers_total + p.embedding + p.output + p.positions + final_norm;
  p.active = layers_active + p.embedding + p.output + p.positions + final_norm;
  // The input embedding is a lookup unless it doubles as the output projection.
  const double matmul_embedding = s.tied_embeddings ? p.embedding : 0.0;
  p.matmul_active = layers_active + matmul_embedding + p.output + final_norm;
  return p;
}

namespace {

std::string alias_key(std::string_view s) {
  std::string out;
  for (char c : s) {
    const char l = detail::lower(c);
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) out.push_back(l);
  }
  return out;
}

std::int64_t get_int(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it != j.end() && it->is_number()) return detail::as_count(it->get<double>(), 1e9);
  }
  return 0;
}

bool get_bool(const nlohmann::json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  if (it != j.end() && it->is_boolean()) return it->get<bool>();
  return fallback;
}

ModelShape shape_from_preset(const nlohmann::json& j) {
  ModelShape s;
  s.id = detail::string_field(j, "id");
  s.name = detail::string_field(j, "name", s.id);
  s.source = detail::string_field(j, "source");
  s.layers = get_int(j, {"layers"});
  s.hidden = get_int(j, {"hidden"});
  s.heads = get_int(j, {"heads"});
  s.kv_heads = get_int(j, {"kv_heads"});
  s.head_dim = get_int(j, {"head_dim"});
  s.ffn = get_int(j, {"ffn"});
  s.vocab = get_int(j, {"vocab"});
  s.seq_len = get_int(j, {"seq_len"});
  s.gated_mlp = get_bool(j, "gated_mlp", false);
  s.tied_embeddings = get_bool(j, "tied_embeddings", false);
  s.learned_positions = get_bool(j, "learned_positions", false);
  s.biases = get_bool(j, "biases", false);
  s.qkv_bias = get_bool(j, "qkv_bias", false);
  s.experts = get_int(j, {"experts"});
  s.top_k = get_int(j, {"top_k"});
  s.moe_ffn = get_int(j, {"moe_ffn"});
  s.shared_experts = get_int(j, {"shared_experts"});
  s.first_dense_layers = get_int(j, {"first_dense_layers"});
  s.q_lora_rank = get_int(j, {"q_lora_rank"});
  s.kv_lora_rank = get_int(j, {"kv_lora_rank"});
  s.qk_nope_head_dim = get_int(j, {"qk_nope_head_dim"});
  s.qk_rope_head_dim = get_int(j, {"qk_rope_head_dim"});
  s.v_head_dim = get_int(j, {"v_head_dim"});
  if (auto it = j.find("stated_params"); it != j.end() && it->is_number())
    s.stated_params = it->get<double>();
  return s;
}

}  // namespace

const ModelCatalog& ModelCatalog::builtin() {
  static const ModelCatalog catalog = [] {
    ModelCatalog c;
    const auto doc = nlohmann::json::parse(detail::embedded_models_json());
    for (const auto& m : doc.at("models")) {
      c.models_.push_back(shape_from_preset(m));
      std::vector<std::string> keys{alias_key(c.models_.back().id)};
      if (auto it = m.find("aliases"); it != m.end())
        for (const auto& a : *it) keys.push_back(alias_key(a.get<std::string>()));
      c.aliases_.push_back(std::move(keys));
    }
    return c;
  }();
  return catalog;
}

const ModelShape* ModelCatalog::find(std::string_view name) const {
  const std::string key = alias_key(name);
  for (std::size_t i = 0; i < models_.size(); ++i)
    for (const auto& a : aliases_[i])
      if (a == key) return &models_[i];
  return nullptr;
}

const ModelShape& ModelCatalog::get(std::string_view name) const {
  if (const ModelShape* m = find(name)) return *m;
  const std::string key = alias_key(name);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (std::size_t i = 0; i < models_.size(); ++i) {
    std::size_t best = SIZE_MAX;
    for (const auto& a : aliases_[i]) best = std::min(best, detail::edit_distance(key, a));
    scored.emplace_back(best, models_[i].id);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> names;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, scored.size()); ++i)
    names.push_back(scored[i].second);
  throw Error(
      fmt::format("unknown model '{}'; closest presets: {}", name, fmt::join(names, ", ")),
      fmt::format("run 'mfu models' for the list, or give a Hugging Face config.json path, or {}",
                  input_phrase(Input::kShape)));
}

/// Llama 4 (transformers Llama4TextConfig): intermediate_size is one expert's MLP and
/// intermediate_size_mlp the dense layers'; every MoE layer adds a shared expert of the
/// expert's size; every interleave_moe_layer_step-th layer is MoE. Scout (16 experts, every
/// layer) is 109B total / 17B active, Maverick (128, every 2nd) 400B / 17B (Meta's model card).
void llama4_layout(const nlohmann::json& j, const std::string& type, ModelShape& s) {
  if (type.rfind("llama4", 0) != 0) return;
  s.gated_mlp = true;
  if (const auto dense = get_int(j, {"intermediate_size_mlp"}); dense > 0 && s.experts > 1) {
    s.moe_ffn = s.ffn;
    s.ffn = dense;
    s.shared_experts = 1;
  }
}

/// Keys that change the FLOP count and that the count does not model are named in the
/// shape's source, never skipped silently.
void note_uncounted(const nlohmann::json& j, ModelShape& s) {
  std::vector<std::string> uncounted;
  if (const auto mtp = get_int(j, {"num_nextn_predict_layers"}); mtp > 0)
    uncounted.push_back(fmt::format("num_nextn_predict_layers={} (multi-token prediction)", mtp));
  if (j.contains("intermediate_size_mlp") && s.moe_ffn == 0)
    uncounted.emplace_back("intermediate_size_mlp (a dense MLP size beside intermediate_size)");
  if (!uncounted.empty()) s.source += fmt::format(" (not counted: {})", fmt::join(uncounted, ", "));
}

ModelShape parse_hf_config(std::string_view json_text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(fmt::format("{}: not valid JSON ({})", origin, e.what()),
                fmt::format("{} is a preset name or a Hugging Face config.json",
                            input_phrase(Input::kModel)));
  }
  if (!j.is_object()) throw Error(fmt::format("{}: a config.json must be a JSON object", origin));
  // Multimodal configs nest the language model.
  if (auto it = j.find("text_config");
      it != j.end() && it->is_object() && !j.contains("num_hidden_layers")) {
    nlohmann::json inner = *it;
    if (!inner.contains("model_type") && j.contains("model_type"))
      inner["model_type"] = j["model_type"];
    j = inner;
  }
  ModelShape s;
  s.id = std::filesystem::path(origin).filename().string();
  s.name =
      detail::string_field(j, "_name_or_path", detail::string_field(j, "model_type", "custom"));
  s.source = origin;
  const std::string type = detail::string_field(j, "model_type");
  s.layers = get_int(j, {"num_hidden_layers", "n_layer", "num_layers"});
  s.hidden = get_int(j, {"hidden_size", "n_embd", "d_model"});
  s.heads = get_int(j, {"num_attention_heads", "n_head", "num_heads"});
  s.kv_heads = get_int(j, {"num_key_value_heads", "multi_query_group_num"});
  s.head_dim = get_int(j, {"head_dim"});
  s.ffn = get_int(j, {"intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"});
  s.vocab = get_int(j, {"vocab_size", "padded_vocab_size"});
  // The longest sequence the model supports, not the one it trained at: the training length
  // comes from the log or the user (a Llama-3.1 config says 131,072 for runs at 8,192).
  s.max_positions =
      get_int(j, {"max_position_embeddings", "n_positions", "seq_length", "max_sequence_length"});
  s.tied_embeddings = get_bool(j, "tie_word_embeddings", type == "gpt2" || type == "opt");
  const std::string act =
      detail::string_field(j, "hidden_act", detail::string_field(j, "activation_function"));
  s.gated_mlp = act == "silu" || act == "swiglu" || act == "geglu" || type == "llama" ||
                type == "mistral" || type == "mixtral" || type == "qwen2" || type == "qwen2_moe" ||
                type == "deepseek_v3" || type == "deepseek_v2" || type == "qwen3" ||
                type == "qwen3_moe" || type == "gemma" || type == "gemma2";
  if (type == "gpt2") {
    s.learned_positions = true;
    s.biases = true;
    s.gated_mlp = false;
  }
  if (type == "gpt_neox" || type == "opt" || type == "bloom") s.biases = true;
  if (type == "opt") s.learned_positions = true;
  s.qkv_bias = get_bool(j, "attention_bias", type == "qwen2" || type == "qwen2_moe");
  s.experts =
      get_int(j, {"num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts"});
  s.top_k = get_int(j, {"num_experts_per_tok", "moe_topk", "top_k"});
  s.moe_ffn = get_int(j, {"moe_intermediate_size"});
  s.shared_experts = get_int(j, {"n_shared_experts", "num_shared_experts"});
  if (s.shared_experts == 0) {
    if (auto sz = get_int(j, {"shared_expert_intermediate_size"}); sz > 0 && s.moe_ffn > 0)
      s.shared_experts = sz / s.moe_ffn;
  }
  s.first_dense_layers = get_int(j, {"first_k_dense_replace"});
  if (auto f = get_int(j, {"moe_layer_freq", "decoder_sparse_step", "interleave_moe_layer_step"});
      f > 0)
    s.moe_layer_freq = f;
  llama4_layout(j, type, s);
  note_uncounted(j, s);
  s.q_lora_rank = get_int(j, {"q_lora_rank"});
  s.kv_lora_rank = get_int(j, {"kv_lora_rank"});
  s.qk_nope_head_dim = get_int(j, {"qk_nope_head_dim"});
  s.qk_rope_head_dim = get_int(j, {"qk_rope_head_dim"});
  s.v_head_dim = get_int(j, {"v_head_dim"});
  std::vector<std::string> missing;
  if (s.layers <= 0) missing.emplace_back("num_hidden_layers");
  if (s.hidden <= 0) missing.emplace_back("hidden_size");
  if (s.heads <= 0) missing.emplace_back("num_attention_heads");
  if (!missing.empty())
    throw Error(fmt::format("{}: config.json lacks {}", origin, fmt::join(missing, ", ")),
                fmt::format("give {} instead", input_phrase(Input::kShape)));
  return s;
}

ModelShape load_hf_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(fmt::format("cannot open model config '{}'", path),
                fmt::format("check the path given as {}", input_phrase(Input::kModel)));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_hf_config(ss.str(), path);
}

ModelShape resolve_model(const std::string& name_or_path) {
  if (const ModelShape* m = ModelCatalog::builtin().find(name_or_path)) return *m;
  std::error_code ec;
  if (detail::ends_with(name_or_path, ".json") ||
      std::filesystem::is_regular_file(name_or_path, ec)) {
    return load_hf_config(name_or_path);
  }
  return ModelCatalog::builtin().get(name_or_path);  // throws with suggestions
}

}  // namespace mfu
