#include "mfu/calc.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <map>

#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
#include "mfu/units.hpp"

namespace mfu {

double choose_peak(const GpuSpec& spec, std::optional<Dtype> requested, Dtype* chosen,
                   std::string* note) {
  const Dtype want = requested.value_or(Dtype::kBf16);
  if (auto p = spec.dense_peak(want)) {
    if (chosen) *chosen = want;
    return *p;
  }
  if (!requested) {
    // Volta and Turing have no bf16: mixed precision there means fp16.
    if (auto p = spec.dense_peak(Dtype::kFp16)) {
      if (chosen) *chosen = Dtype::kFp16;
      if (note)
        *note = fmt::format("{} has no bf16 peak; using its fp16 peak (give {} to choose)", spec.id,
                            input_phrase(Input::kDtype));
      return *p;
    }
  }
  std::vector<std::string> have;
  for (const auto& [d, v] : spec.dense_flops) have.emplace_back(to_string(d));
  throw Error(fmt::format("{} has no published dense {} peak", spec.id, to_string(want)),
              fmt::format("give {} ({}) or {}", input_phrase(Input::kDtype), fmt::join(have, "|"),
                          input_phrase(Input::kPeak)));
}

namespace {

/// One unknown of the identity with where its value came from.
struct Var {
  std::optional<double> value;
  std::string origin;  // "--step-time 330ms" (the input's phrase and value) or "derived"
  bool given = false;
};

class Solver {
 public:
  std::map<std::string, Var> v;

  bool known(const std::string& k) const {
    auto it = v.find(k);
    return it != v.end() && it->second.value;
  }
  double get(const std::string& k) const { return *v.at(k).value; }

  /// A value the user gave; two inputs that give the same quantity must agree (within the
  /// tolerance of derive), or neither is taken silently.
  void give(const std::string& k, std::optional<double> value, std::string origin) {
    if (!value) return;
    if (auto it = v.find(k); it != v.end() && it->second.given) {
      derive(k, *value, origin);
      return;
    }
    v[k] = Var{value, std::move(origin), true};
  }

  /// Sets `k` from a rule; if already known, checks agreement.
  bool derive(const std::string& k, double value, const std::string& how) {
    if (!std::isfinite(value)) return false;
    auto& var = v[k];
    if (var.value) {
      const double a = *var.value;
      const double rel = std::fabs(a - value) / std::max(std::fabs(a), std::fabs(value));
      if (rel > 2e-3) conflicts.push_back({k, a, var.origin, value, how});
      return false;
    }
    var.value = value;
    var.origin = how;
    return true;
  }

  struct Conflict {
    std::string key;
    double have;
    std::string have_origin;
    double derived;
    std::string how;
  };
  std::vector<Conflict> conflicts;
};

std::string describe_value(const std::string& key, double value) {
  if (key == "mfu") return format_percent(value);
  if (key == "T") return format_duration(value);
  if (key == "F") return format_flops(value);
  if (key == "A") return format_flop_rate(value);
  if (key == "P") return format_flop_rate(value);
  if (key == "fpt") return format_flops(value) + "/token";
  if (key == "r") return format_count(value) + " tok/s";
  if (key == "tok") return format_count(value) + " tokens";
  if (key == "n") return format_number(value) + " GPUs";
  return format_number(value);
}

const char* key_name(const std::string& key) {
  if (key == "mfu") return "MFU";
  if (key == "T") return "step time";
  if (key == "F") return "FLOPs per step";
  if (key == "A") return "achieved FLOP/s";
  if (key == "P") return "peak per GPU";
  if (key == "fpt") return "FLOPs per token";
  if (key == "r") return "tokens per second";
  if (key == "tok") return "tokens per step";
  if (key == "n") return "GPU count";
  return "value";
}

}  // namespace

namespace {

/// The peak per GPU (from the table, or given) and the GPU count; returns the part's TDP.
std::optional<double> give_hardware(const CalcInputs& in, const GpuDatabase& db, Solver& s,
                                    CalcResult& out) {
  std::optional<double> tdp;
  if (in.peak_flops) {
    s.give("P", in.peak_flops,
           fmt::format("{} {}", input_phrase(Input::kPeak), format_flop_rate(*in.peak_flops)));
    out.dtype = in.dtype ? to_string(*in.dtype) : "as given with the peak";
    if (in.gpu)
      if (GpuMatch m = db.resolve(*in.gpu); m.spec) {
        const auto own = m.spec->dense_peak(in.dtype.value_or(Dtype::kBf16));
        out.notes.push_back(fmt::format(
            "the peak given ({}) replaces {}'s {} from the accelerator table",
            format_flop_rate(*in.peak_flops), m.spec->id,
            own ? format_flop_rate(*own) + " dense " + to_string(in.dtype.value_or(Dtype::kBf16))
                : std::string("peak")));
      }
  }
  if (in.gpu) {
    GpuMatch m = db.resolve(*in.gpu);
    if (!m.note.empty()) out.notes.push_back(m.note);
    out.gpu = m.spec->id;
    out.gpu_name = m.spec->name;
    tdp = m.spec->tdp_w;
    if (!in.peak_flops) {
      Dtype chosen = Dtype::kBf16;
      std::string note;
      const double p = choose_peak(*m.spec, in.dtype, &chosen, &note) * m.share;
      if (!note.empty()) out.notes.push_back(note);
      if (!m.spec->peak_note.empty())
        out.notes.push_back(fmt::format("{}: {}", m.spec->id, m.spec->peak_note));
      out.dtype = to_string(chosen);
      s.give("P", p, fmt::format("{} dense {} peak", m.spec->id, to_string(chosen)));
    }
    // A TPU slice type gives the chip count when no count is given.
    if (m.count && !in.gpus) s.give("n", m.count, fmt::format("the slice type {}", *in.gpu));
  }
  s.give("n", in.gpus,
         fmt::format("{} {}", input_phrase(Input::kGpus), in.gpus ? format_number(*in.gpus) : ""));
  if (in.gpus && (*in.gpus < 1 || std::floor(*in.gpus) != *in.gpus))
    throw Error(fmt::format("{} must be a whole number of at least 1, got {}",
                            input_phrase(Input::kGpus), format_number(*in.gpus)));

  return tdp;
}

/// FLOPs per token from the model, and tokens per step from the batch or the flag.
std::optional<FlopsPerToken> give_work(const CalcInputs& in, Solver& s, CalcResult& out) {
  std::optional<FlopsPerToken> fpt;
  if (in.model) {
    const ModelShape& m = *in.model;
    const bool any_shape = m.layers > 0 || m.hidden > 0 || m.heads > 0 || m.head_dim > 0;
    if (m.params && in.convention != Convention::kPalm &&
        in.convention != Convention::kTorchtitan2024)
      throw Error(
          fmt::format("the parameter count is not used by the {} convention, which "
                      "counts each matrix multiply from the shape",
                      to_string(in.convention)),
          fmt::format("drop {}, or use the palm convention (6N)", input_phrase(Input::kParams)));
    if (any_shape || m.params) {
      fpt = training_flops_per_token(m, in.convention, in.recompute, m.seq_len);
      const ParamCount pc = count_params(m);
      out.params = pc.total;
      out.matmul_params = pc.matmul_active;
      out.flops_formula = fpt->formula;
      if (!fpt->note.empty()) out.notes.push_back(fpt->note);
      s.give("fpt", fpt->model,
             fmt::format("{} ({} convention)", m.name.empty() ? m.id : m.name,
                         to_string(in.convention)));
      out.model_flops_per_token = fpt->model;
      if (in.recompute != Recompute::kUnspecified) out.hardware_flops_per_token = fpt->hardware;
    }
    if (in.batch) {
      if (m.seq_len <= 0)
        throw Error(
            fmt::format("{} needs a sequence length to count tokens", input_phrase(Input::kBatch)),
            fmt::format("give {} (or {})", input_phrase(Input::kSeqLen),
                        input_phrase(Input::kTokensPerStep)));
      s.give("tok", *in.batch * static_cast<double>(m.seq_len),
             fmt::format("{} {} x seq_len {}", input_phrase(Input::kBatch),
                         format_number(*in.batch), m.seq_len));
    }
  } else if (in.batch) {
    throw Error(
        fmt::format("{} needs a model to know the sequence length", input_phrase(Input::kBatch)),
        fmt::format("give {} (or {} with {}), or {}", input_phrase(Input::kModel),
                    input_phrase(Input::kSeqLen), input_phrase(Input::kShape),
                    input_phrase(Input::kTokensPerStep)));
  }
  if (in.tokens_per_step) s.give("tok", in.tokens_per_step, input_phrase(Input::kTokensPerStep));
  s.give("F", in.flops_per_step,
         fmt::format("{} {}", input_phrase(Input::kFlopsPerStep),
                     in.flops_per_step ? format_flops(*in.flops_per_step) : ""));
  s.give("T", in.step_time_s,
         fmt::format("{} {}", input_phrase(Input::kStepTime),
                     in.step_time_s ? format_duration(*in.step_time_s) : ""));
  s.give("r", in.tokens_per_s, input_phrase(Input::kTokensPerSec));
  s.give("mfu", in.mfu, input_phrase(Input::kMfu));
  if (in.mfu && !(*in.mfu > 0))
    throw Error(fmt::format("MFU must be above 0, got {}", format_percent(*in.mfu)),
                "write MFU as a percentage (40%) or a fraction (0.4)");
  if (in.mfu && *in.mfu > 1.0)
    throw ImpossibleResult(fmt::format("{} {} is above 100%, which is impossible",
                                       input_phrase(Input::kMfu), format_percent(*in.mfu)),
                           "write MFU as a percentage (40%) or a fraction (0.4)");
  for (const char* k : {"P", "n", "F", "T", "r", "tok", "fpt"}) {
    if (s.known(k) && s.get(k) <= 0)
      throw Error(
          fmt::format("{} must be positive, got {}", key_name(k), describe_value(k, s.get(k))));
  }

  return fpt;
}

/// Applies the identity MFU = FLOPs per step / (step time x GPUs x peak) and its rearrangements
/// until nothing new can be derived.
void propagate(Solver& s) {
  for (int round = 0; round < 16; ++round) {
    bool changed = false;
    auto k = [&](const char* name) { return s.known(name); };
    auto g = [&](const char* name) { return s.get(name); };
    if (k("tok") && k("T"))
      changed |= s.derive("r", g("tok") / g("T"), "tokens per step / step time");
    if (k("tok") && k("r"))
      changed |= s.derive("T", g("tok") / g("r"), "tokens per step / tokens per second");
    if (k("r") && k("T"))
      changed |= s.derive("tok", g("r") * g("T"), "tokens per second x step time");
    if (k("fpt") && k("tok"))
      changed |= s.derive("F", g("fpt") * g("tok"), "FLOPs per token x tokens per step");
    if (k("F") && k("fpt"))
      changed |= s.derive("tok", g("F") / g("fpt"), "FLOPs per step / FLOPs per token");
    if (k("F") && k("tok"))
      changed |= s.derive("fpt", g("F") / g("tok"), "FLOPs per step / tokens per step");
    if (k("F") && k("T")) changed |= s.derive("A", g("F") / g("T"), "FLOPs per step / step time");
    if (k("A") && k("T")) changed |= s.derive("F", g("A") * g("T"), "achieved FLOP/s x step time");
    if (k("F") && k("A"))
      changed |= s.derive("T", g("F") / g("A"), "FLOPs per step / achieved FLOP/s");
    if (k("fpt") && k("r"))
      changed |= s.derive("A", g("fpt") * g("r"), "FLOPs per token x tokens per second");
    if (k("A") && k("fpt"))
      changed |= s.derive("r", g("A") / g("fpt"), "achieved FLOP/s / FLOPs per token");
    if (k("A") && k("n") && k("P"))
      changed |= s.derive("mfu", g("A") / (g("n") * g("P")), "achieved / (GPUs x peak)");
    if (k("mfu") && k("n") && k("P"))
      changed |= s.derive("A", g("mfu") * g("n") * g("P"), "MFU x GPUs x peak");
    if (k("A") && k("mfu") && k("P"))
      changed |= s.derive("n", g("A") / (g("mfu") * g("P")), "achieved / (MFU x peak)");
    if (k("A") && k("mfu") && k("n"))
      changed |= s.derive("P", g("A") / (g("mfu") * g("n")), "achieved / (MFU x GPUs)");
    if (!changed) break;
  }
}

/// "the inputs imply 1.26 PFLOP/s per GPU against a peak of 989.5 TFLOP/s", where known.
std::string implied_rate(const CalcResult& out) {
  if (!out.achieved_flops_per_s_per_gpu || !out.peak_flops_per_s_per_gpu) return "";
  return fmt::format(": the inputs imply {}/s per GPU against a peak of {}/s",
                     format_flops(*out.achieved_flops_per_s_per_gpu),
                     format_flops(*out.peak_flops_per_s_per_gpu));
}

/// What to check when MFU comes out above 100%: only the inputs that were given.
std::string impossible_hint(const CalcInputs& in) {
  std::vector<std::string> checks;
  auto p = [](Input i) { return input_phrase(i); };
  if (in.flops_per_step)
    checks.push_back(
        fmt::format("{} is model FLOPs per step for all GPUs together", p(Input::kFlopsPerStep)));
  if (in.tokens_per_s)
    checks.push_back(
        fmt::format("{} is for all GPUs together, not per GPU", p(Input::kTokensPerSec)));
  if (in.tokens_per_step || in.batch)
    checks.push_back(fmt::format("{} and {} are global, all GPUs together",
                                 p(Input::kTokensPerStep), p(Input::kBatch)));
  if (in.step_time_s) checks.push_back(fmt::format("{} is per step", p(Input::kStepTime)));
  if (in.gpus) checks.push_back(fmt::format("{} is the job's whole GPU count", p(Input::kGpus)));
  if (in.peak_flops)
    checks.push_back(
        fmt::format("{} is the dense peak of one GPU (not the sparse or whole-node "
                    "figure)",
                    p(Input::kPeak)));
  else if (in.gpu)
    checks.push_back(
        fmt::format("{} and {}: the peak is the part's dense one in that dtype (a run "
                    "in FP8 has twice the BF16 peak)",
                    p(Input::kGpu), p(Input::kDtype)));
  if (in.model)
    checks.push_back(
        fmt::format("{} or {}: a mixture of experts counts only the parameters a token "
                    "uses",
                    p(Input::kModel), p(Input::kParams)));
  return "check that " + fmt::format("{}", fmt::join(checks, "; "));
}

/// The error when MFU is not determined: which of the work, the time, the peak and the GPU
/// count are missing.
[[noreturn]] void throw_missing(const Solver& s) {
  std::vector<std::string> missing;
  const bool work = s.known("F") || s.known("fpt") || s.known("A");
  const bool time = s.known("T") || s.known("r") || s.known("A");
  auto phrase = [](Input i) { return input_phrase(i); };
  if (!work)
    missing.push_back(fmt::format("the work ({} with {} or {}, or {})", phrase(Input::kModel),
                                  phrase(Input::kBatch), phrase(Input::kTokensPerStep),
                                  phrase(Input::kFlopsPerStep)));
  if (!time)
    missing.push_back(
        fmt::format("the time ({} or {})", phrase(Input::kStepTime), phrase(Input::kTokensPerSec)));
  if (!s.known("P"))
    missing.push_back(
        fmt::format("the peak ({} or {})", phrase(Input::kGpu), phrase(Input::kPeak)));
  if (!s.known("n")) missing.push_back(fmt::format("the GPU count ({})", phrase(Input::kGpus)));
  if (missing.empty())
    missing.push_back(fmt::format("tokens per step to link {} or {} to the model",
                                  phrase(Input::kFlopsPerStep), phrase(Input::kStepTime)));
  throw Error(fmt::format("cannot compute MFU: missing {}", fmt::join(missing, "; ")),
              "MFU needs the work, the time, the peak per GPU and the GPU count");
}

}  // namespace

CalcResult solve(const CalcInputs& in, const GpuDatabase& db) {
  CalcResult out;
  out.convention = to_string(in.convention);
  out.recompute = to_string(in.recompute);
  Solver s;
  const std::optional<double> tdp = give_hardware(in, db, s, out);
  const std::optional<FlopsPerToken> fpt = give_work(in, s, out);
  propagate(s);

  if (!s.conflicts.empty()) {
    const auto& c = s.conflicts.front();
    throw Error(fmt::format("inputs disagree: {} is {} from {}, but {} gives {}", key_name(c.key),
                            describe_value(c.key, c.have), c.have_origin, c.how,
                            describe_value(c.key, c.derived)),
                "drop one of the two, or check their units");
  }

  auto val = [&](const char* k) -> std::optional<double> {
    if (s.known(k)) return s.get(k);
    return std::nullopt;
  };
  out.mfu = val("mfu");
  out.model_flops_per_step = val("F");
  out.tokens_per_step = val("tok");
  out.step_time_s = val("T");
  out.tokens_per_s = val("r");
  out.peak_flops_per_s_per_gpu = val("P");
  out.gpus = val("n");
  if (s.known("fpt")) out.model_flops_per_token = s.get("fpt");
  if (s.known("A") && s.known("n")) out.achieved_flops_per_s_per_gpu = s.get("A") / s.get("n");
  if (out.gpus && (std::fabs(*out.gpus - std::round(*out.gpus)) > 1e-6) && !in.gpus)
    out.notes.push_back(fmt::format("the inputs imply {:.2f} GPUs, not a whole number", *out.gpus));

  if (!out.mfu) throw_missing(s);
  if (*out.mfu > 1.0 + 1e-9) {
    throw ImpossibleResult(fmt::format("MFU would be {}, which is impossible (above 100%){}",
                                       format_percent(*out.mfu), implied_rate(out)),
                           impossible_hint(in));
  }
  if (fpt && in.recompute != Recompute::kUnspecified && out.mfu) {
    out.hfu = *out.mfu * fpt->hardware / fpt->model;
    if (*out.hfu > 1.0 + 1e-9)
      throw ImpossibleResult(fmt::format("HFU would be {}, above 100%", format_percent(*out.hfu)),
                             fmt::format("check {} and the peak", input_phrase(Input::kRecompute)));
  }
  if (tdp) out.tdp_w = tdp;
  if (in.train_tokens) {
    if (!out.tokens_per_s)
      throw Error(fmt::format("{} needs the token rate", input_phrase(Input::kTrainTokens)),
                  fmt::format("give {}, or {} with the batch", input_phrase(Input::kTokensPerSec),
                              input_phrase(Input::kStepTime)));
    out.train_time_s = *in.train_tokens / *out.tokens_per_s;
    if (out.gpus) {
      out.gpu_hours = *out.train_time_s * *out.gpus / 3600.0;
      if (in.price_per_gpu_hour) out.cost = *out.gpu_hours * *in.price_per_gpu_hour;
      if (tdp) out.energy_kwh = *out.gpu_hours * *tdp / 1000.0;
    }
  } else if (in.price_per_gpu_hour) {
    out.notes.push_back(fmt::format("{} needs {} to give a cost",
                                    input_phrase(Input::kPricePerGpuHour),
                                    input_phrase(Input::kTrainTokens)));
  }
  return out;
}

}  // namespace mfu
