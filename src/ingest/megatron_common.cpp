#include "ingest/megatron_common.hpp"

#include <fmt/format.h>

#include <cstring>

#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

std::int64_t take_int(std::string_view& s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  std::int64_t v = 0;
  std::size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i < 18) v = v * 10 + (s[i++] - '0');
  if (i == 0) return -1;
  s.remove_prefix(i);
  return v;
}

double value_number(std::string_view v) {
  double d = kUnknown;
  return take_number_to(v, d) ? d : kUnknown;
}

using Field = MegatronLineMemo::Field;

/// What a field's key names: one of the fields below, and whether it is the loss.
struct Meaning {
  Field::Kind kind = Field::Kind::kNone;
  bool is_loss = false;
};

Meaning classify(std::string_view key) {
  Meaning f;
  // The loss is the first key ending in "loss" that is not the loss scale ("lm loss",
  // "loss", "mlm loss").
  f.is_loss = ends_with(key, "loss") && !contains(key, "scale");
  using K = Field::Kind;
  switch (key.front()) {
    case 'e':
      if (starts_with(key, "elapsed time per iteration"))
        f.kind = contains(key, "(ms)") ? K::kElapsedMs : K::kElapsedS;
      break;
    case 't':
      if (starts_with(key, "throughput per GPU"))
        f.kind = K::kThroughputTflops;
      else if (key == "tokens per gpu per second (tgs)")
        f.kind = K::kTokensPerGpuPerS;
      break;
    case 'T':
      if (key == "TFLOPs" || key == "TFLOPS") f.kind = K::kDeepSpeedTflops;
      break;
    case 'a':
      if (starts_with(key, "approx flops per GPU"))
        f.kind = K::kNeoxFlops;
      else if (key == "actual seqlen")
        f.kind = K::kActualSeqLen;
      break;
    case 'c':
      if (key == "consumed samples")
        f.kind = K::kConsumedSamples;
      else if (key == "consumed tokens")
        f.kind = K::kConsumedTokens;
      break;
    case 'g':
      if (key == "global batch size") f.kind = K::kGlobalBatch;
      break;
    case 's':
      if (key == "samples per second" || key == "samples/sec") f.kind = K::kSamplesPerS;
      break;
    case 'n':
      if (key == "number of skipped iterations") f.kind = K::kSkipped;
      break;
    default: break;
  }
  return f;
}

/// GPT-NeoX's "112.9TFLOPS": a number and a unit prefix.
void neox_flops(std::string_view val, MegatronIterationLine& out) {
  std::string_view s = val;
  double d = 0;
  if (!take_number_to(s, d)) return;
  s = trim(s);
  double m = 1;
  if (!s.empty()) {
    switch (s.front()) {
      case 'T': m = 1e12; break;
      case 'G': m = 1e9; break;
      case 'P': m = 1e15; break;
      default: break;
    }
  }
  out.reported_flops_per_gpu = d * m;
  out.reporter = "gpt-neox";
}

/// Stores the value of one "key: value" field of the line.
void apply(Meaning f, std::string_view key, std::string_view val, MegatronIterationLine& out) {
  using K = Field::Kind;
  switch (f.kind) {
    case K::kNone: break;
    case K::kElapsedMs:
    case K::kElapsedS: {
      const double v = value_number(val);
      if (!known(v)) {
        out.bad_number = true;
        out.bad_field = key;
      }
      out.time_s = f.kind == K::kElapsedMs ? v / 1000.0 : v;
      break;
    }
    case K::kThroughputTflops:
      out.reported_flops_per_gpu = value_number(val) * 1e12;
      out.reporter = "megatron-lm";
      break;
    case K::kTokensPerGpuPerS: out.tokens_per_gpu_per_s = value_number(val); break;
    case K::kDeepSpeedTflops:
      out.reported_flops_per_gpu = value_number(val) * 1e12;
      out.reporter = "megatron-deepspeed";
      break;
    case K::kNeoxFlops: neox_flops(val, out); break;
    case K::kActualSeqLen: out.actual_seq_len = value_number(val); break;
    case K::kConsumedSamples: out.consumed_samples = value_number(val); break;
    case K::kConsumedTokens: out.consumed_tokens = value_number(val); break;
    case K::kGlobalBatch: out.global_batch = value_number(val); break;
    case K::kSamplesPerS: out.samples_per_s = value_number(val); break;
    case K::kSkipped:
      out.skipped = static_cast<std::uint32_t>(as_count(value_number(val), 1 << 30));
      break;
  }
  if (f.is_loss && !known(out.loss)) out.loss = value_number(val);
}

/// The iteration number "iteration N/M" before `elapsed` (where "elapsed time per iteration"
/// starts); returns where "iteration" was found, npos when none is followed by N/.
std::size_t read_iteration(std::string_view line, std::size_t elapsed, MegatronIterationLine& out) {
  std::size_t p = find_text(line, "iteration");
  while (p != std::string_view::npos && p < elapsed) {
    std::string_view rest = line.substr(p + 9);
    const std::int64_t it = take_int(rest);
    if (it >= 0) {
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      if (!rest.empty() && rest.front() == '/') {
        rest.remove_prefix(1);
        out.iteration = it;
        out.train_iters = take_int(rest);
        return p;
      }
    }
    p = find_text(line, "iteration", p + 9);
  }
  return std::string_view::npos;
}

/// One '|'-separated field of the line from `start`: finds its end, key and value the long way
/// and remembers its layout in `memo`. Returns the end (the '|' or the line's end).
std::size_t field_by_search(std::string_view line, std::size_t start, Field* memo,
                            MegatronIterationLine& out) {
  std::size_t bar = line.find('|', start);
  if (bar == std::string_view::npos) bar = line.size();
  const std::string_view seg = line.substr(start, bar - start);
  const std::size_t colon = find_text(seg, ": ");
  Meaning f;
  std::string_view key;
  if (colon != std::string_view::npos) key = trim(seg.substr(0, colon));
  if (!key.empty()) {
    f = classify(key);
    apply(f, key, seg.substr(colon + 2), out);
  }
  if (memo != nullptr) {
    // A field without ": " is remembered with an empty prefix: searched for again.
    memo->kind = f.kind;
    memo->is_loss = f.is_loss;
    memo->prefix.clear();
    if (colon != std::string_view::npos) memo->prefix.assign(seg.substr(0, colon + 2));
    if (!key.empty()) memo->key_begin = static_cast<std::size_t>(key.data() - seg.data());
    memo->key_size = key.size();
  }
  return bar;
}

/// The same field when its text up to and including the first ": " is the remembered prefix:
/// same key, so the same field, and no search for the key's end. Returns npos when it is not.
std::size_t field_by_memo(std::string_view line, std::size_t start, const Field& memo,
                          MegatronIterationLine& out) {
  const std::size_t n = memo.prefix.size();
  if (n == 0 || line.size() - start < n || !same_bytes(line.data() + start, memo.prefix.data(), n))
    return std::string_view::npos;
  // The prefix holds no '|' and its first ": " is its end (it was cut so), so the field is at
  // least this long and its key ends where the remembered one did.
  std::size_t bar = find_near(line, '|', start + n);
  if (bar == std::string_view::npos) bar = line.size();
  if (memo.kind != Field::Kind::kNone || memo.is_loss)
    apply({memo.kind, memo.is_loss}, line.substr(start + memo.key_begin, memo.key_size),
          line.substr(start + n, bar - start - n), out);
  return bar;
}

}  // namespace

bool parse_megatron_iteration(std::string_view line, MegatronIterationLine& out,
                              MegatronLineMemo* memo) {
  // Fast reject: every variant prints "elapsed time per iteration".
  const std::size_t e = find_text(line, "elapsed time per iteration");
  if (e == std::string_view::npos) return false;
  const std::size_t p = read_iteration(line, e, out);
  if (p == std::string_view::npos) return false;
  // Timestamp prefix "[2024-03-30 20:02:40]" before "iteration".
  if (p > 10) out.timestamp_s = find_timestamp(line.substr(0, p));
  // Fields: the whole line split on '|'.
  std::size_t start = 0;
  for (std::size_t i = 0; start < line.size(); ++i) {
    Field* remembered = nullptr;
    std::size_t bar = std::string_view::npos;
    // Fields past the first kMaxFields are not remembered: a line of a million '|' would
    // otherwise keep a million entries.
    if (memo != nullptr && i < MegatronLineMemo::kMaxFields) {
      if (i == memo->fields.size()) memo->fields.emplace_back();
      remembered = &memo->fields[i];
      bar = field_by_memo(line, start, *remembered, out);
    }
    if (bar == std::string_view::npos) bar = field_by_search(line, start, remembered, out);
    start = bar + 1;
  }
  return true;
}

Iteration MegatronRecordMaker::make(const MegatronIterationLine& l, std::uint64_t line_no) {
  Iteration it;
  it.step = l.iteration;
  it.line = static_cast<std::uint32_t>(line_no);
  it.time_s = l.time_s;
  it.timestamp_s = l.timestamp_s;
  it.loss = l.loss;
  it.reported_flops_per_gpu = l.reported_flops_per_gpu;
  const bool continues = prev_iteration_ >= 0 && l.iteration > prev_iteration_;
  const double span = continues ? static_cast<double>(l.iteration - prev_iteration_) : kUnknown;
  // Samples per iteration: the consumed-samples counter, else the printed global batch.
  if (known(l.consumed_samples) && known(prev_samples_) && continues &&
      l.consumed_samples >= prev_samples_) {
    it.samples = (l.consumed_samples - prev_samples_) / span;
  } else if (known(l.global_batch)) {
    it.samples = l.global_batch;
  }
  if (known(l.consumed_tokens) && known(prev_tokens_) && continues &&
      l.consumed_tokens >= prev_tokens_) {
    it.tokens = (l.consumed_tokens - prev_tokens_) / span;
  } else if (known(l.actual_seq_len) && known(it.samples)) {
    it.tokens = l.actual_seq_len * it.samples;
  }
  prev_iteration_ = l.iteration;
  prev_samples_ = l.consumed_samples;
  prev_tokens_ = l.consumed_tokens;
  return it;
}

namespace {

std::optional<bool> as_bool(std::string_view v) {
  v = trim(v);
  if (v == "True" || v == "true" || v == "1") return true;
  if (v == "False" || v == "false" || v == "0" || v == "None") return false;
  return std::nullopt;
}

std::optional<double> as_count(std::string_view v) {
  v = trim(v);
  if (!v.empty() && v.front() == '[') {
    // "num_experts [1]" in Megatron-DeepSpeed: take the largest entry.
    double best = 0;
    bool any = false;
    for (auto part :
         split(v.substr(1, v.find(']') == std::string_view::npos ? v.size() - 1 : v.find(']') - 1),
               ',')) {
      if (auto d = parse_double(part)) {
        best = std::max(best, *d);
        any = true;
      }
    }
    return any ? std::optional<double>(best) : std::nullopt;
  }
  auto d = parse_double(v);
  if (!d || !std::isfinite(*d)) return std::nullopt;
  return d;
}

}  // namespace

bool apply_megatron_arg(std::string_view raw_name, std::string_view value, std::uint64_t line,
                        RunBuilder& out, bool overwrite) {
  std::string name(trim(raw_name));
  while (!name.empty() && name.front() == '-') name.erase(name.begin());
  for (char& c : name)
    if (c == '-') c = '_';
  struct Map {
    const char* arg;
    const char* key;
  };
  static constexpr Map kCounts[] = {
      {"world_size", "gpus"},
      {"tensor_model_parallel_size", "tp"},
      {"pipeline_model_parallel_size", "pp"},
      {"context_parallel_size", "cp"},
      {"expert_model_parallel_size", "ep"},
      {"moe_expert_parallel_size", "ep"},
      {"data_parallel_size", "dp"},
      {"num_layers", "layers"},
      {"hidden_size", "hidden"},
      {"num_attention_heads", "heads"},
      {"num_key_value_heads", "kv_heads"},
      {"kv_channels", "head_dim"},
      {"ffn_hidden_size", "ffn"},
      {"padded_vocab_size", "vocab"},
      {"seq_length", "seq_len"},
      {"micro_batch_size", "micro_batch"},
      {"global_batch_size", "global_batch"},
      {"num_experts", "experts"},
      {"moe_router_topk", "top_k"},
      {"topk", "top_k"},
      {"moe_ffn_hidden_size", "moe_ffn"},
      {"log_interval", "log_interval"},
      {"train_iters", "train_iters"},
      {"save_interval", "save_interval"},
      {"eval_interval", "eval_interval"},
      {"eval_iters", "eval_iters"},
      {"num_layers_per_virtual_pipeline_stage", "layers_per_virtual_stage"},
      {"virtual_pipeline_model_parallel_size", "virtual_pp"},
      {"gradient_accumulation_steps", "grad_accum"}};
  for (const auto& m : kCounts) {
    if (name == m.arg) {
      auto v = as_count(value);
      if (!v || *v <= 0) return true;  // "None"
      out.meta(m.key, *v, line, overwrite);
      return true;
    }
  }
  if (name == "vocab_size") {
    if (auto v = as_count(value); v && *v > 0) out.meta("vocab", *v, line, false);
    return true;
  }
  if (name == "num_query_groups") {
    if (auto v = as_count(value); v && *v > 0) out.meta("query_groups", *v, line, overwrite);
    return true;
  }
  if (name == "group_query_attention") {
    if (auto b = as_bool(value)) out.meta("gqa", *b ? 1.0 : 0.0, line, overwrite);
    return true;
  }
  if (name == "swiglu") {
    if (auto b = as_bool(value)) out.meta("swiglu", *b ? 1.0 : 0.0, line, overwrite);
    return true;
  }
  if (name == "untie_embeddings_and_output_weights") {
    if (auto b = as_bool(value)) out.meta("tied_embeddings", *b ? 0.0 : 1.0, line, overwrite);
    return true;
  }
  if (name == "bf16" || name == "fp16" || name == "fp8") {
    if (auto b = as_bool(value); b && *b) out.meta("dtype", name, line, overwrite);
    return true;
  }
  if (name == "recompute_granularity") {
    std::string v(trim(value));
    if (v == "full" || v == "selective") out.meta("recompute", v, line, overwrite);
    return true;
  }
  if (name == "checkpoint_activations" || name == "recompute_activations") {
    if (auto b = as_bool(value); b && *b)
      out.meta("recompute", name == "checkpoint_activations" ? "full" : "selective", line,
               overwrite);
    return true;
  }
  if (name == "moe_shared_expert_intermediate_size") {
    if (auto v = as_count(value); v && *v > 0) out.meta("shared_expert_ffn", *v, line, overwrite);
    return true;
  }
  if (name == "moe_layer_freq") {
    if (auto v = as_count(value); v && *v > 0) out.meta("moe_layer_freq", *v, line, overwrite);
    return true;
  }
  return false;
}

void apply_megatron_command_line(std::string_view line, std::uint64_t number, RunBuilder& out) {
  // Tokens may be separated by spaces or ', ' with quotes (Python list echo).
  std::vector<std::string> tokens;
  std::string cur;
  for (char c : line) {
    if (c == ' ' || c == '\t' || c == ',' || c == '\'' || c == '"' || c == '[' || c == ']') {
      if (!cur.empty()) tokens.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) tokens.push_back(std::move(cur));
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t.size() < 3 || t[0] != '-' || t[1] != '-') continue;
    std::string name = t.substr(2);
    std::string value = "True";
    const std::size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (i + 1 < tokens.size() &&
               !(tokens[i + 1].size() > 2 && tokens[i + 1][0] == '-' && tokens[i + 1][1] == '-')) {
      value = tokens[i + 1];
    }
    // torchrun's own flags give the GPU count.
    if (name == "nproc_per_node" || name == "nproc-per-node") {
      if (auto v = parse_double(value)) out.meta("gpus_per_node", *v, number, false);
      continue;
    }
    if (name == "nnodes") {
      if (auto v = parse_double(value)) out.meta("nodes", *v, number, false);
      continue;
    }
    apply_megatron_arg(name, value, number, out, false);
  }
}

}  // namespace mfu::detail
