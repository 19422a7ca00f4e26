#include "analysis/resolve.hpp"

#include <fmt/format.h>

#include <cmath>

#include "mfu/calc.hpp"
#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
#include "mfu/units.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// Model dimensions from a log; beyond 1e9 they are nonsense and read as unknown (0).
std::int64_t as_int(std::optional<double> v) {
  return v ? as_count(*v, 1e9) : 0;
}

/// The model shape the log describes (Megatron args, torchtitan config, MLPerf keys).
std::optional<ModelShape> model_from_meta(const RunMeta& meta) {
  if (!meta.number("layers") || !meta.number("hidden") || !meta.number("heads"))
    return std::nullopt;
  ModelShape m;
  m.id = "log";
  m.name =
      meta.text("model_name")
          .value_or(fmt::format("{} layers, hidden {}, {} heads", as_int(meta.number("layers")),
                                as_int(meta.number("hidden")), as_int(meta.number("heads"))));
  m.source = meta.source("layers");
  m.layers = as_int(meta.number("layers"));
  m.hidden = as_int(meta.number("hidden"));
  m.heads = as_int(meta.number("heads"));
  if (auto kv = meta.number("kv_heads")) {
    m.kv_heads = as_int(kv);
  } else if (meta.number("gqa").value_or(0) > 0 && meta.number("query_groups")) {
    m.kv_heads = as_int(meta.number("query_groups"));
  }
  m.head_dim = as_int(meta.number("head_dim"));
  m.ffn = as_int(meta.number("ffn"));
  m.vocab = as_int(meta.number("vocab"));
  m.seq_len = as_int(meta.number("seq_len"));
  m.gated_mlp = meta.number("swiglu").value_or(0) > 0;
  m.tied_embeddings = meta.number("tied_embeddings").value_or(0) > 0;
  if (auto e = meta.number("experts"); e && *e > 1) {
    m.experts = as_int(e);
    m.top_k = as_int(meta.number("top_k"));
    if (m.top_k == 0) m.top_k = 2;  // Megatron's default --moe-router-topk
    m.moe_ffn = as_int(meta.number("moe_ffn"));
    if (auto sh = meta.number("shared_expert_ffn"); sh && m.eff_moe_ffn() > 0)
      m.shared_experts = as_int(sh) / m.eff_moe_ffn();
    if (auto f = meta.number("moe_layer_freq"))
      m.moe_layer_freq = std::max<std::int64_t>(1, as_int(f));
  }
  return m;
}

std::string fmt_count(double v) {
  return format_count(v);
}

}  // namespace

namespace {

/// Where a value the user gave came from, phrased by the front end ("given (--gpus)").
std::string given(Input i) {
  return "given (" + input_phrase(i) + ")";
}

/// What the inputs show of why the framework's FLOP count differs from mfu's: its parameter
/// count against mfu's N (the embedding table V x h in or out), or recomputation it counts.
std::string framework_cause(const ModelShape& model, const ModelShape& framework, Convention c,
                            Recompute recompute) {
  if (c == Convention::kMegatronDeepSpeed &&
      (recompute == Recompute::kFull || recompute == Recompute::kSelective))
    return "Megatron-DeepSpeed's TFLOPs count the recomputed forward pass (hardware FLOPs, HFU)";
  if (!framework.params || model.params || model.vocab <= 0 || model.hidden <= 0) return "";
  double ours = 0;
  try {
    ours = count_params(model).matmul_active;
  } catch (const Error&) {
    return "";
  }
  const double table = static_cast<double>(model.vocab) * static_cast<double>(model.hidden);
  const double gap = ours - *framework.params;
  if (std::fabs(gap - table) <= 0.02 * table)
    return model.tied_embeddings
               ? fmt::format(
                     "the framework's N ({}) leaves out the output projection the "
                     "model shares with its tied embedding ({} x {} = {} parameters), "
                     "a matrix multiply every token runs",
                     format_count(*framework.params), model.vocab, model.hidden,
                     format_count(table))
               : fmt::format(
                     "the framework's N ({}) leaves out the output projection ({} "
                     "parameters)",
                     format_count(*framework.params), format_count(table));
  if (std::fabs(-gap - table) <= 0.02 * table)
    return fmt::format(
        "the framework's N ({}) counts the input embedding ({} parameters), a "
        "lookup, as matrix multiplies (torchtitan did before 2024-04-26)",
        format_count(*framework.params), format_count(table));
  return "";
}

/// Resolution in stages, one per input; each reads the flags, then the log, then defaults.
struct Resolver {
  const Run& run;
  const RunMeta& meta;
  const AnalyzeOptions& opt;
  const GpuDatabase& db;
  Resolved r;

  void use(const std::string& name, const std::string& value, const std::string& source) {
    r.used.push_back(InputValue{name, value, source});
  }
  void gpu_count();
  void ranks_against_gpus();
  void token_scope();
  void accelerator();
  void slice(const GpuMatch& m, const std::string& name);
  void sequence_length();
  void model();
  void convention();
  void work();
  void pipeline();
  void framework();
};

/// GPU count.
void Resolver::gpu_count() {
  if (opt.gpus) {
    r.gpus = *opt.gpus;
    use("gpus", format_number(r.gpus), given(Input::kGpus));
  } else if (auto g = meta.number("gpus")) {
    r.gpus = *g;
    use("gpus", format_number(r.gpus), meta.source("gpus"));
  } else if (meta.number("gpus_per_node") && meta.number("nodes")) {
    r.gpus = *meta.number("gpus_per_node") * *meta.number("nodes");
    use("gpus", format_number(r.gpus),
        "launcher: gpus_per_node x nodes (" + meta.source("gpus_per_node") + ")");
  } else if (auto v = meta.number("gpus_visible")) {
    r.gpus = *v;
    use("gpus", format_number(r.gpus),
        "assumed: every GPU in the nvidia-smi table (" + meta.source("gpus_visible") + ")");
    r.warnings.push_back(
        fmt::format("the GPU count {} is assumed from the nvidia-smi table; give {} if the job "
                    "used fewer or more",
                    format_number(r.gpus), input_phrase(Input::kGpus)));
  } else {
    r.unknowns.push_back("GPU count: give " + input_phrase(Input::kGpus));
  }
  if (known(r.gpus) && (r.gpus < 1 || !std::isfinite(r.gpus)))
    throw Error(
        fmt::format("the GPU count must be at least 1, got {}", format_number(r.gpus)),
        "give " + input_phrase(Input::kGpus) + " with the number of accelerators the job used");
  ranks_against_gpus();
}

/// A TPU slice type gives the chip count where nothing else does; a MIG slice has its share
/// of the part's peak.
void Resolver::slice(const GpuMatch& m, const std::string& name) {
  r.peak_share = m.share;
  if (!m.count || known(r.gpus)) return;
  r.gpus = *m.count;
  use("gpus", format_number(r.gpus), "the accelerator type '" + name + "'");
  std::erase_if(r.unknowns, [](const std::string& u) { return u.rfind("GPU count", 0) == 0; });
}

/// Records whose tokens are one GPU's (the log prints tokens/s per GPU): with the GPU count
/// they are scaled to the job; without it, MFU = per-GPU FLOP/s / per-GPU peak needs no count.
void Resolver::token_scope() {
  r.work_gpus = r.gpus;
  if (meta.text("tokens_scope") != "gpu") return;
  if (known(r.gpus)) {
    r.tokens_scale = r.gpus;
    return;
  }
  r.per_gpu = true;
  r.work_gpus = 1;
  for (auto& u : r.unknowns)
    if (u.rfind("GPU count:", 0) == 0)
      u = "GPU count (for GPU-hours and the job's totals; MFU is per GPU, from the per-GPU "
          "tokens/s of " +
          meta.source("tokens_scope") + "): give " + input_phrase(Input::kGpus);
}

/// Each rank drives one accelerator: more ranks printing steps than GPUs means the stated
/// count is wrong (too few GPUs overstates MFU by the same factor).
void Resolver::ranks_against_gpus() {
  std::size_t ranks = 0;
  std::int32_t highest = -1;
  for (const auto& s : run.rank_streams)
    if (s.rank >= 0 && s.records > 0) {
      ++ranks;
      highest = std::max(highest, s.rank);
    }
  if (!known(r.gpus) || static_cast<double>(ranks) <= r.gpus) return;
  const std::string what = fmt::format(
      "{} distinct ranks (up to rank {}) print step records, but the GPU count is {} "
      "({}): with one GPU per rank, MFU is overstated {:.2g}x",
      ranks, highest, format_number(r.gpus), opt.gpus ? given(Input::kGpus) : meta.source("gpus"),
      static_cast<double>(ranks) / r.gpus);
  r.warnings.push_back(
      what +
      (opt.gpus ? "" : "; give " + input_phrase(Input::kGpus) + " with the job's real count"));
  if (!opt.gpus) r.gpu_count_conflict = what;
}

/// Accelerator and peak.
void Resolver::accelerator() {
  std::optional<Dtype> dtype = opt.dtype;
  std::string dtype_source = opt.dtype ? given(Input::kDtype) : "";
  if (!dtype) {
    if (auto d = meta.text("dtype")) {
      try {
        dtype = parse_dtype(*d);
        dtype_source = meta.source("dtype");
      } catch (const Error&) {
      }
    }
  }
  std::string gpu_query;
  std::string gpu_source;
  if (opt.gpu) {
    gpu_query = *opt.gpu;
    gpu_source = given(Input::kGpu);
  } else if (auto g = meta.text("gpu_name")) {
    gpu_query = *g;
    gpu_source = meta.source("gpu_name");
  }
  if (!gpu_query.empty()) {
    GpuMatch m = opt.gpu ? db.resolve(gpu_query) : db.try_resolve(gpu_query);
    if (m.spec) {
      r.spec = m.spec;
      use("gpu", m.spec->id,
          gpu_source + (gpu_query != m.spec->id ? " ('" + gpu_query + "')" : ""));
      if (!m.note.empty()) r.warnings.push_back(m.note);
      slice(m, gpu_query);
    } else {
      r.warnings.push_back(
          fmt::format("the log names the accelerator '{}', which is not in the database; closest: "
                      "{}",
                      gpu_query, fmt::join(db.suggestions(gpu_query), ", ")));
    }
  }
  if (opt.peak_flops) {
    r.peak = *opt.peak_flops;
    r.dtype = dtype ? to_string(*dtype) : "as given";
    use("peak", format_flop_rate(r.peak), given(Input::kPeak));
    if (r.spec)
      if (auto own = r.spec->dense_peak(dtype.value_or(Dtype::kBf16)))
        r.warnings.push_back(fmt::format(
            "the peak given ({}) replaces {}'s dense {} peak from the accelerator table ({})",
            format_flop_rate(r.peak), r.spec->id, to_string(dtype.value_or(Dtype::kBf16)),
            format_flop_rate(*own)));
  } else if (r.spec) {
    Dtype chosen = Dtype::kBf16;
    std::string note;
    try {
      r.peak = choose_peak(*r.spec, dtype, &chosen, &note) * r.peak_share;
      r.dtype = to_string(chosen);
      use("peak", format_flop_rate(r.peak),
          fmt::format("{} dense {} ({}){}", r.spec->id, r.dtype,
                      dtype_source.empty() ? "default dtype" : dtype_source,
                      r.peak_share < 1 ? fmt::format(" x {:.3g} (MIG slice)", r.peak_share)
                                       : std::string()));
      if (!note.empty()) r.warnings.push_back(note);
      if (!r.spec->peak_note.empty())
        r.warnings.push_back(fmt::format("{}: {}", r.spec->id, r.spec->peak_note));
    } catch (const Error& e) {
      r.warnings.push_back(std::string(e.what()) + "; " + e.hint());
    }
  }
  if (!known(r.peak)) {
    if (r.spec == nullptr)
      r.unknowns.push_back(fmt::format("accelerator: give {} (see 'mfu gpus') or {}",
                                       input_phrase(Input::kGpu), input_phrase(Input::kPeak)));
    else
      r.unknowns.push_back(fmt::format("peak for this dtype: give {} or {}",
                                       input_phrase(Input::kDtype), input_phrase(Input::kPeak)));
  }
}

/// Sequence length.
void Resolver::sequence_length() {
  if (opt.seq_len) {
    r.seq_len = *opt.seq_len;
    use("seq_len", format_number(r.seq_len), given(Input::kSeqLen));
  } else if (auto s = meta.number("seq_len")) {
    r.seq_len = *s;
    use("seq_len", format_number(r.seq_len), meta.source("seq_len"));
  }
}

/// Model.
void Resolver::model() {
  std::string model_source;
  if (opt.model && opt.model->id == "custom" && !opt.model->params) {
    // A shape without a model overrides single fields of the log's shape.
    std::optional<ModelShape> base = model_from_meta(meta);
    ModelShape m = base.value_or(*opt.model);
    const ModelShape& f = *opt.model;
    auto over = [](std::int64_t& dst, std::int64_t v) {
      if (v > 0) dst = v;
    };
    over(m.layers, f.layers);
    over(m.hidden, f.hidden);
    over(m.heads, f.heads);
    over(m.kv_heads, f.kv_heads);
    over(m.head_dim, f.head_dim);
    over(m.ffn, f.ffn);
    over(m.vocab, f.vocab);
    over(m.experts, f.experts);
    over(m.top_k, f.top_k);
    if (f.gated_mlp) m.gated_mlp = true;
    if (m.has_core_shape()) {
      r.model = m;
      model_source = base ? "the log, with " + given(Input::kShape) : given(Input::kShape);
    } else {
      r.unknowns.push_back(fmt::format("model shape: only part of it is given; give {} or {}",
                                       input_phrase(Input::kShape), input_phrase(Input::kModel)));
    }
  } else if (opt.model) {
    r.model = opt.model;
    model_source = opt.model->id == "custom" ? given(Input::kParams)
                                             : given(Input::kModel) + " " + opt.model->id;
  } else if (auto m = model_from_meta(meta)) {
    r.model = m;
    model_source = "the log (" + meta.source("layers") + ")";
  } else if (auto name = meta.text("model_name")) {
    if (const ModelShape* p = ModelCatalog::builtin().find(*name)) {
      r.model = *p;
      model_source = "preset " + p->id + " named by the log (" + meta.source("model_name") + ")";
    }
  }
  if (r.model) {
    if (known(r.seq_len)) {
      r.model->seq_len = as_count(r.seq_len, 1e9);
    } else if (r.model->seq_len > 0) {
      r.seq_len = static_cast<double>(r.model->seq_len);
      use("seq_len", format_number(r.seq_len), "model default (" + model_source + ")");
    }
    use("model", r.model->name.empty() ? r.model->id : r.model->name, model_source);
  }
}

/// Convention and recomputation.
void Resolver::convention() {
  r.convention = opt.convention.value_or(Convention::kPalm);
  use("convention", to_string(r.convention),
      opt.convention ? given(Input::kConvention) : "default (PaLM, the MFU definition)");
  if (opt.recompute) {
    r.recompute = *opt.recompute;
    use("recompute", to_string(r.recompute), given(Input::kRecompute));
  } else if (auto rc = meta.text("recompute")) {
    try {
      r.recompute = parse_recompute(*rc);
      use("recompute", to_string(r.recompute), meta.source("recompute"));
    } catch (const Error&) {
    }
  }
  if (r.model) {
    try {
      r.fpt = training_flops_per_token(*r.model, r.convention, r.recompute,
                                       known(r.seq_len) ? as_count(r.seq_len, 1e9) : 0);
      if (!r.fpt->note.empty()) r.warnings.push_back(r.fpt->note);
    } catch (const Error& e) {
      r.unknowns.push_back(std::string("model FLOPs: ") + e.what() + " (" + e.hint() + ")");
    }
  }
}

/// Work per iteration.
void Resolver::work() {
  if (opt.tokens_per_step) {
    r.tokens_default = *opt.tokens_per_step;
    use("tokens_per_step", fmt_count(r.tokens_default), given(Input::kTokensPerStep));
  } else if (opt.batch && known(r.seq_len)) {
    r.tokens_default = *opt.batch * r.seq_len;
    use("tokens_per_step", fmt_count(r.tokens_default), given(Input::kBatch) + " x seq_len");
  } else if (auto t = meta.number("tokens_per_step")) {
    r.tokens_default = *t;
    use("tokens_per_step", fmt_count(r.tokens_default), meta.source("tokens_per_step"));
  } else if (auto gb = meta.number("global_batch"); gb && known(r.seq_len)) {
    r.tokens_default = *gb * r.seq_len;
    use("tokens_per_step", fmt_count(r.tokens_default),
        "global batch x seq_len (" + meta.source("global_batch") + ")");
  }
  if (opt.flops_per_step) {
    r.flops_default = *opt.flops_per_step;
    use("flops_per_step", format_flops(r.flops_default), given(Input::kFlopsPerStep));
  }
}

/// Pipeline.
void Resolver::pipeline() {
  r.pp = meta.number("pp").value_or(kUnknown);
  if (opt.micro_batches) {
    r.micro_batches = *opt.micro_batches;
  } else if (auto gb = meta.number("global_batch"); gb && meta.number("micro_batch")) {
    const double dp = meta.number("dp").value_or(
        known(r.gpus) ? r.gpus / (meta.number("tp").value_or(1) * meta.number("pp").value_or(1) *
                                  meta.number("cp").value_or(1))
                      : kUnknown);
    if (known(dp) && dp >= 1) r.micro_batches = *gb / (*meta.number("micro_batch") * dp);
  }
}

/// The framework's own count: which convention printed it.
void Resolver::framework() {
  if (auto by = meta.text("framework_flops_by")) {
    const std::string& b = *by;
    if (b == "megatron-deepspeed") {
      r.framework_convention = Convention::kMegatronDeepSpeed;
    } else if (b == "megatron-lm") {
      // Megatron-LM changed its formula on 2023-11-28, in 2024 (MoE/GQA) and on 2025-03-06.
      const double t = run.first_timestamp_s;
      if (known(t) && t < 1704067200.0)
        r.framework_convention = Convention::kMegatron2023;  // before 2024-01-01
      else if (known(t) && t < 1741219200.0)
        r.framework_convention = Convention::kMegatron2024;  // 2025-03-06
      else
        r.framework_convention = Convention::kMegatron;
    } else if (b == "torchtitan") {
      // torchtitan put the input embedding in 6N until 2024-04-26 (1714089600).
      const double t = run.first_timestamp_s;
      r.framework_convention =
          known(t) && t < 1714089600.0 ? Convention::kTorchtitan2024 : Convention::kPalm;
    } else if (b == "nanogpt") {
      r.framework_convention = Convention::kPalm;
    } else if (b == "maxtext") {
      r.framework_convention = Convention::kMaxText;
    }
  }
  if (run.format == "nanogpt") r.framework_convention = Convention::kPalm;
  if (r.framework_convention && r.model) {
    ModelShape fm = *r.model;
    // torchtitan counts 6 x its own printed parameter count (embeddings excluded).
    if (meta.text("framework_flops_by").value_or("") == "torchtitan") {
      if (auto n = meta.number("framework_params")) fm.params = *n;
    }
    r.framework_cause = framework_cause(*r.model, fm, *r.framework_convention, r.recompute);
    const Recompute frc =
        *r.framework_convention == Convention::kMegatronDeepSpeed ? r.recompute : Recompute::kNone;
    try {
      r.framework_fpt = training_flops_per_token(fm, *r.framework_convention, frc,
                                                 known(r.seq_len) ? as_count(r.seq_len, 1e9) : 0);
    } catch (const Error&) {
    }
  }
}

}  // namespace

double tokens_of(const Iteration& it, double seq_len, double tokens_default, double scale) {
  if (known(it.tokens)) return it.tokens * scale;
  if (known(it.samples) && known(seq_len)) return it.samples * seq_len;
  return tokens_default;
}

Resolved resolve_inputs(const Run& run, const AnalyzeOptions& opt, const GpuDatabase& db) {
  Resolver x{run, run.meta, opt, db, {}};
  x.gpu_count();
  x.accelerator();
  x.token_scope();
  x.sequence_length();
  x.model();
  x.convention();
  x.work();
  x.pipeline();
  x.framework();
  return std::move(x.r);
}

}  // namespace mfu::detail
