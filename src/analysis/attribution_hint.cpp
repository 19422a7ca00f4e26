// What would attribute the unattributed time: the options of the run's own framework that time
// its phases or write a PyTorch profiler trace of a few steps. "Unattributed" is never ranked
// as a fix; the report says this instead. The options are the frameworks' documented ones
// (their argument parsers and config schemas); a framework without either gets the profiler.
#include <fmt/format.h>

#include <string_view>

#include "analysis/stages.hpp"
#include "mfu/units.hpp"

namespace mfu::detail {
namespace {

struct FrameworkHint {
  std::string_view format;  ///< the reader's name (a run read from several formats: the first)
  const char* advice;
};

// The generic recipe the framework-specific ones fall back to.
constexpr const char* kProfilerRecipe =
    "take a PyTorch profiler trace of a few steps (torch.profiler.profile with "
    "schedule(wait=1, warmup=1, active=3) and tensorboard_trace_handler, prof.step() after "
    "each step) and run mfu analyze on the trace files";

constexpr FrameworkHint kHints[] = {
    {"megatron",
     "Megatron-LM prints its phase timers with --timing-log-level 2 (add --timing-log-option "
     "minmax for the spread over ranks); under Megatron-DeepSpeed, DeepSpeed's "
     "\"wall_clock_breakdown\": true also times forward, backward and step"},
    {"deepspeed",
     "set \"wall_clock_breakdown\": true in the DeepSpeed config (forward, backward and step "
     "times at every steps_per_print) and \"comms_logger\": {\"enabled\": true} for the "
     "collectives"},
    {"torchtitan",
     "torchtitan prints no phase timers; --profiling.enable_profiling with "
     "--profiling.profile_freq N writes a PyTorch profiler trace per rank under the dump "
     "folder's profile_trace/: run mfu analyze on those files"},
    {"hf_trainer",
     "the Hugging Face Trainer prints no phase timers; a TrainerCallback that starts "
     "torch.profiler.profile(schedule=schedule(wait=1, warmup=1, active=3), "
     "on_trace_ready=tensorboard_trace_handler(DIR)) and calls prof.step() in on_step_end "
     "writes a trace of a few steps: run mfu analyze on it"},
    {"nanogpt",
     "nanoGPT's bench.py with --profile=True writes a PyTorch profiler trace of a few steps "
     "(bench_log/): run mfu analyze on it"},
    {"nemo",
     "NeMo and PyTorch Lightning: Trainer(profiler=PyTorchProfiler(dirpath=DIR, "
     "schedule=torch.profiler.schedule(wait=1, warmup=1, active=3))) writes a Chrome trace of "
     "a few steps: run mfu analyze on it"},
    {"composer",
     "Composer's Profiler with torch_prof_folder set (llm-foundry: the profiler section of the "
     "YAML) writes a PyTorch profiler trace per rank: run mfu analyze on those files"},
    {"torchtune",
     "torchtune: profiler.enabled=True on the tune run command line (the recipe's "
     "setup_torch_profiler, wait_steps/warmup_steps/active_steps) writes a trace per rank: run "
     "mfu analyze on it"},
    {"nanotron",
     "nanotron: profiler.profiler_export_path in the config writes a PyTorch profiler trace: "
     "run mfu analyze on it"},
    {"olmo",
     "OLMo: torch_profiling: true in the config (OLMo-core: the ProfilerCallback) writes a "
     "PyTorch profiler trace: run mfu analyze on it"},
    {"maxtext",
     "MaxText times only the whole step; profiler=xplane writes an XLA profile that mfu does "
     "not read, so the split needs per-phase timers in the log (mfu's native format takes "
     "forward_s, backward_s, optimizer_s, comm_s and data_s per record)"},
    {"native",
     "add the phase times the native format reads to each record (forward_s, backward_s, "
     "optimizer_s, comm_s, data_s; examples/emit_native_log.py shows how), or "},
};

/// The framework hint for `format`, "" when there is none of its own. The readers of a
/// framework's other files share its hint.
std::string hint_for(std::string_view format) {
  if (format == "hf_trainer_state" || format == "llamafactory") format = "hf_trainer";
  if (format == "lightning_csv") format = "nemo";
  for (const auto& h : kHints)
    if (h.format == format && *h.advice) return h.advice;
  return {};
}

}  // namespace

void fill_attribution_hint(Analysis& a) {
  const Bucket* other = a.bucket(BucketId::kOther);
  if (!other || other->fraction < 0.01) return;
  const std::string_view format = std::string_view(a.format).substr(0, a.format.find('+'));
  std::string advice = hint_for(format);
  if (a.trace)
    advice =
        "the traces hold no device activity for it (CPU-side time: the host between steps, "
        "Python overhead); a trace with CUDA activity (activities=[CPU, CUDA]) splits it";
  else if (advice.empty())
    advice = kProfilerRecipe;
  else if (advice.back() == ' ')
    advice += kProfilerRecipe;  // the native format's hint ends in "or "
  a.attribution_hint = fmt::format(
      "Not a fix: {} of the wall time is unattributed (nothing in the {} input times "
      "it). To attribute it: {}.",
      format_percent(other->fraction), a.format.empty() ? "run's" : a.format, advice);
}

}  // namespace mfu::detail
