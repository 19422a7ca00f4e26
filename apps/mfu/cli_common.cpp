#include "cli_common.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "mfu/error.hpp"
#include "mfu/units.hpp"

namespace mfu::cli {

bool ModelFlags::any() const {
  return !model.empty() || !params.empty() || !layers.empty() || !hidden.empty() ||
         !heads.empty() || !kv_heads.empty() || !head_dim.empty() || !ffn.empty() ||
         !vocab.empty() || !experts.empty() || !top_k.empty() || !seq_len.empty() || swiglu;
}

void add_model_flags(CLI::App* app, ModelFlags& f) {
  app->add_option("--model", f.model,
                  "Model preset (see 'mfu models') or a Hugging Face config.json")
      ->group("Model");
  app->add_option("--params", f.params,
                  "Parameter count N for 6N, e.g. 540.35B (active count for MoE)")
      ->group("Model");
  app->add_option("--layers", f.layers, "Transformer layers")->group("Model");
  app->add_option("--hidden", f.hidden, "Hidden size (d_model)")->group("Model");
  app->add_option("--heads", f.heads, "Attention (query) heads")->group("Model");
  app->add_option("--kv-heads", f.kv_heads, "Key/value heads (GQA query groups)")->group("Model");
  app->add_option("--head-dim", f.head_dim, "Head dimension (default hidden/heads)")
      ->group("Model");
  app->add_option("--ffn", f.ffn, "MLP inner size (default 4*hidden)")->group("Model");
  app->add_option("--vocab", f.vocab, "Vocabulary size")->group("Model");
  app->add_option("--experts", f.experts, "Routed experts (MoE)")->group("Model");
  app->add_option("--top-k", f.top_k, "Experts per token (MoE)")->group("Model");
  app->add_option("--seq-len", f.seq_len, "Sequence length in tokens")->group("Model");
  app->add_flag("--swiglu", f.swiglu, "Gated MLP (SwiGLU): three hidden x ffn matrices")
      ->group("Model");
  app->add_option("--convention", f.convention,
                  "FLOP convention: palm (6N + 12LHQT, default), megatron, megatron-2024, "
                  "megatron-2023, megatron-deepspeed, maxtext; to reproduce what a framework "
                  "printed before a fix: torchtitan-2024 (embedding in 6N), "
                  "maxtext-full-attention")
      ->group("Model");
  app->add_option("--recompute", f.recompute,
                  "Activation recomputation for HFU: none, selective, full")
      ->group("Model");
}

void add_hardware_flags(CLI::App* app, HardwareFlags& f) {
  app->add_option("--gpu", f.gpu,
                  "Accelerator name (see 'mfu gpus'), e.g. h100, 'NVIDIA H100 80GB HBM3'")
      ->group("Hardware");
  app->add_option("--gpus", f.gpus, "Number of GPUs (accelerators)")->group("Hardware");
  app->add_option("--dtype", f.dtype,
                  "Compute dtype for the peak: bf16 (default), fp16, fp8, tf32, fp32")
      ->group("Hardware");
  app->add_option("--peak", f.peak, "Dense peak per GPU, e.g. 989.5T; overrides --gpu")
      ->group("Hardware");
}

std::optional<double> quantity(const std::string& text, Quantity kind) {
  if (text.empty()) return std::nullopt;
  return parse_quantity(text, kind);
}

namespace {

std::int64_t int_flag(const std::string& text, const char* name) {
  if (text.empty()) return 0;
  const double v = parse_quantity(text, Quantity::kCount);
  if (v < 1 || v != static_cast<double>(static_cast<std::int64_t>(v)))
    throw Error(fmt::format("{} must be a whole number of at least 1, got '{}'", name, text));
  return static_cast<std::int64_t>(v);
}

/// A preset whose hidden size or heads were changed keeps nothing that followed from the old
/// ones: the MLP sizes scale with the hidden size (GPT-3's 4h stays 4h, Llama's 3.5h stays
/// 3.5h) and a head dimension that was hidden / heads is derived again, each unless given.
ModelShape with_changed_width(const ModelShape& preset, ModelShape m, bool ffn_free,
                              bool head_dim_free) {
  std::vector<std::string> changed;
  if (m.hidden != preset.hidden && preset.hidden > 0) {
    const double scale = static_cast<double>(m.hidden) / static_cast<double>(preset.hidden);
    if (ffn_free && preset.ffn > 0) {
      m.ffn = std::llround(static_cast<double>(preset.ffn) * scale);
      changed.push_back(fmt::format("FFN {} (scaled with the hidden size)", m.ffn));
    }
    if (preset.moe_ffn > 0) m.moe_ffn = std::llround(static_cast<double>(preset.moe_ffn) * scale);
  }
  const bool width_changed = m.hidden != preset.hidden || m.heads != preset.heads;
  if (width_changed && head_dim_free && preset.head_dim > 0 && preset.heads > 0 &&
      preset.head_dim == preset.hidden / preset.heads) {
    m.head_dim = 0;
    changed.push_back("head dimension hidden / heads");
  }
  if (!changed.empty())
    m.source += fmt::format(" with changed dimensions ({})", fmt::join(changed, ", "));
  return m;
}

}  // namespace

std::optional<ModelShape> build_model(const ModelFlags& f) {
  if (!f.any()) return std::nullopt;
  ModelShape m;
  if (!f.model.empty()) {
    m = resolve_model(f.model);
  } else {
    m.id = "custom";
    m.name = "custom model";
    m.source = "shape flags";
  }
  auto set = [](std::int64_t& field, const std::string& text, const char* name) {
    if (!text.empty()) field = int_flag(text, name);
  };
  const ModelShape preset = m;
  set(m.layers, f.layers, "--layers");
  set(m.hidden, f.hidden, "--hidden");
  set(m.heads, f.heads, "--heads");
  set(m.kv_heads, f.kv_heads, "--kv-heads");
  set(m.head_dim, f.head_dim, "--head-dim");
  set(m.ffn, f.ffn, "--ffn");
  set(m.vocab, f.vocab, "--vocab");
  set(m.experts, f.experts, "--experts");
  set(m.top_k, f.top_k, "--top-k");
  set(m.seq_len, f.seq_len, "--seq-len");
  if (f.swiglu) m.gated_mlp = true;
  if (!f.params.empty()) m.params = parse_quantity(f.params, Quantity::kCount);
  if (!f.model.empty()) m = with_changed_width(preset, m, f.ffn.empty(), f.head_dim.empty());
  if (m.kv_heads > 0 && m.heads > 0 && m.heads % m.kv_heads != 0)
    throw Error(fmt::format("--heads {} is not a multiple of --kv-heads {}", m.heads, m.kv_heads));
  return m;
}

GpuDatabase load_gpu_db(const GlobalOptions& g) {
  return GpuDatabase::load(g.gpu_db);
}

bool use_color(const GlobalOptions& g) {
  if (g.color == "always") return true;
  if (g.color == "never") return false;
  if (const char* nc = std::getenv("NO_COLOR"); nc != nullptr && *nc != '\0') return false;
  if (const char* term = std::getenv("TERM"); term != nullptr && std::string(term) == "dumb")
    return false;
  return ::isatty(STDOUT_FILENO) == 1;
}

RenderOptions render_options(const GlobalOptions& g, bool to_stdout) {
  RenderOptions o;
  o.color = to_stdout && use_color(g);
  o.width = 100;
  winsize ws{};
  if (to_stdout && ::isatty(STDOUT_FILENO) == 1 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
      ws.ws_col >= 40)
    o.width = ws.ws_col;
  o.command_line = g.command_line;
  std::time_t now = std::time(nullptr);
  if (const char* sde = std::getenv("SOURCE_DATE_EPOCH"); sde != nullptr && *sde != '\0')
    now = static_cast<std::time_t>(std::strtoll(sde, nullptr, 10));
  std::tm utc{};
  if (::gmtime_r(&now, &utc) != nullptr) {
    char buf[32];
    if (std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &utc) > 0) o.generated_at = buf;
  }
  return o;
}

std::string quoted_command_line(const std::vector<std::string>& args) {
  std::string out = "mfu";
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789-_./=:,%+@") == std::string::npos;
    out += ' ';
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

void warn(const std::string& message) {
  spdlog::warn("{}", message);
}
void info(const std::string& message) {
  spdlog::info("{}", message);
}

}  // namespace mfu::cli
