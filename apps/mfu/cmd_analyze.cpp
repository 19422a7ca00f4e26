// `mfu analyze LOG...`: ingest -> analyze -> render.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "cli_common.hpp"
#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/units.hpp"
#include "progress.hpp"

namespace mfu::cli {

void add_work_flags(CLI::App* cmd, WorkFlags& f) {
  cmd->add_option("--tokens-per-step", f.tokens_per_step,
                  "Tokens per step, all GPUs (when the log does not say)")
      ->group("Work");
  cmd->add_option("--batch", f.batch, "Sequences per step, all GPUs (with the sequence length)")
      ->group("Work");
  cmd->add_option("--flops", f.flops, "Model FLOPs per step, all GPUs, e.g. 35T")->group("Work");
  cmd->add_option("--micro-batches", f.micro_batches,
                  "Pipeline micro-batches per step (for the bubble)")
      ->group("Work");
  cmd->add_option("--warmup", f.warmup,
                  "Treat the first N iterations as warm-up (default: detected)")
      ->group("Work");
  cmd->add_option("--price-per-gpu-hour", f.price,
                  "Price of one GPU-hour: adds the cost of each bucket")
      ->group("Work");
}

AnalyzeOptions analyze_options(const ModelFlags& mf, const HardwareFlags& hf, const WorkFlags& wf) {
  AnalyzeOptions o;
  ModelFlags shape = mf;
  if (!mf.seq_len.empty()) {
    o.seq_len = parse_quantity(mf.seq_len, Quantity::kCount);
    shape.seq_len.clear();
  }
  o.model = build_model(shape);
  if (!mf.convention.empty() && mf.convention != "palm")
    o.convention = parse_convention(mf.convention);
  if (!mf.recompute.empty()) o.recompute = parse_recompute(mf.recompute);
  if (!hf.gpu.empty()) o.gpu = hf.gpu;
  o.gpus = quantity(hf.gpus, Quantity::kCount);
  if (o.gpus && (*o.gpus < 1 || *o.gpus != std::floor(*o.gpus)))
    throw Error(fmt::format("--gpus must be a whole number of at least 1, got '{}'", hf.gpus));
  o.peak_flops = quantity(hf.peak, Quantity::kFlopRate);
  if (!hf.dtype.empty()) o.dtype = parse_dtype(hf.dtype);
  o.tokens_per_step = quantity(wf.tokens_per_step, Quantity::kCount);
  o.batch = quantity(wf.batch, Quantity::kCount);
  o.flops_per_step = quantity(wf.flops, Quantity::kFlops);
  o.micro_batches = quantity(wf.micro_batches, Quantity::kCount);
  if (!wf.warmup.empty())
    o.warmup = static_cast<std::int64_t>(parse_quantity(wf.warmup, Quantity::kCount));
  o.price_per_gpu_hour = quantity(wf.price, Quantity::kMoney);
  return o;
}

/// What an untimed run lacks, for the error after its report.
std::string untimed_message(const Run& run) {
  const std::string format = run.format.empty() ? "training" : run.format;
  if (run.iterations.empty())
    return fmt::format(
        "the {} log has no step records with a valid time, so there is nothing to judge", format);
  return fmt::format(
      "the {} log has {} step records ({}) but no step time in any of them, so there is no MFU "
      "and no split of the time to report",
      format, run.iterations.size(), fmt::join(run.fields, ", "));
}

Runner add_analyze(CLI::App& app, GlobalOptions& g) {
  struct Flags {
    std::vector<std::string> inputs;
    ModelFlags model;
    HardwareFlags hw;
    WorkFlags work;
    IngestFlags ingest;
    std::string output = "text", out_file;
    bool per_iteration = false;
    bool follow = false;
    double interval = 5.0;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("analyze", "MFU of a run and where the lost time went");
  cmd->footer(
      "Reads Megatron-LM/NeMo, torchtitan, Hugging Face, DeepSpeed, nanoGPT/llm.c, MaxText, "
      "MLPerf, Lightning CSV,\n"
      "PyTorch-profiler traces and mfu's own JSON Lines. Flags override what the log says; the "
      "report says where\n"
      "each input came from.\n\n"
      "Examples:\n"
      "  mfu analyze train.log\n"
      "  mfu analyze train.log --gpu h100 --gpus 64 --model llama3-8b\n"
      "  mfu analyze megatron.log --output html -o report.html\n"
      "  mfu analyze run.jsonl --output json -o baseline.json     # a baseline for mfu check\n"
      "  mfu analyze logs/ --price-per-gpu-hour 2.50\n"
      "  mfu analyze --follow train.log                           # a log still being written");
  cmd->add_option("inputs", f->inputs, "Log files, directories, or - for stdin")->required();
  add_model_flags(cmd, f->model);
  add_hardware_flags(cmd, f->hw);
  add_work_flags(cmd, f->work);
  add_ingest_flags(cmd, f->ingest);
  cmd->add_option("--output", f->output,
                  "text, json, markdown, csv, html, or summary (one line of additive quantities "
                  "for mfu merge and fleet reports)")
      ->capture_default_str();
  cmd->add_option("-o,--output-file", f->out_file,
                  "Write the report to FILE (atomically) instead of stdout");
  cmd->add_flag("--per-iteration", f->per_iteration,
                "Include per-iteration records in the JSON report");
  cmd->add_flag("--follow", f->follow,
                "Watch a log that is still being written; Ctrl-C prints the final report");
  cmd->add_option("--interval", f->interval, "Seconds between updates with --follow")
      ->capture_default_str();
  return [f, &g]() {
    const OutputFormat format = parse_output_format(f->output);
    const AnalyzeOptions opt = analyze_options(f->model, f->hw, f->work);
    const GpuDatabase db = load_gpu_db(g);
    if (f->follow)
      return follow_log(f->inputs, opt, db, f->ingest, format, f->out_file, f->interval, g);
    Output out(f->out_file, f->inputs);
    IngestOptions io = ingest_options(f->ingest, g);
    // The loss is shown only where the records are listed.
    io.keep_loss = format == OutputFormat::kCsv || f->per_iteration;
    const Run run = ingest_with_progress(f->inputs, io, g);
    print_diagnostics(run, g);
    const Analysis a = analyze(run, opt, db);
    // A run without step timing has no MFU and no split: refused, saying what the log lacks.
    if (a.untimed)
      throw Error(untimed_message(run),
                  "'mfu inspect' shows the fields each record carries; the log needs a step time "
                  "or a throughput per step");
    RenderOptions ro = render_options(g, out.to_stdout());
    ro.per_iteration = f->per_iteration;
    render_analysis(a, run, format, ro, out.stream());
    out.commit();
    return kExitOk;
  };
}

}  // namespace mfu::cli
