// `mfu whatif`: projections of a measured run, analytical estimates without a log, and the
// fragmentation replay of a cluster job trace. Flags are parsed here; the numbers come from
// mfu/whatif.hpp.
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "cli_common.hpp"
#include "mfu/error.hpp"
#include "mfu/units.hpp"
#include "mfu/whatif.hpp"
#include "progress.hpp"

namespace mfu::cli {
namespace {

struct WhatifFlags {
  std::vector<std::string> inputs;
  // The measured run (what analyze would be told).
  ModelFlags model;
  WorkFlags work;
  IngestFlags ingest;
  // With a log they describe the logged run (as for analyze); without one, the hardware.
  std::string gpu, gpus, peak, dtype;
  std::string old_run_gpu, old_run_gpus, old_run_peak;  // the spellings before --to-*
  // The scenario.
  std::string comm, io, idle, checkpoint, eval, generation, startup, restart, inefficiency, overlap,
      stalls;
  std::vector<std::string> scale;
  std::string to_gpu, to_gpus, to_peak, train_tokens;
  // Analytical mode.
  std::string tp, pp, cp, vpp, micro_batch, old_global_batch,
      kernel_efficiency = "70%", grad_bytes = "2", grad_compression, intra_bw, inter_bw = "50GB/s",
      gpus_per_node = "8", checkpoint_time, mtbf, restart_time = "10min";
  bool no_stragglers = false;
  std::string output = "text", out_file;
};

struct ClusterFlags {
  int nodes = 0;
  int gpus_per_node = 8;
  std::string jobs;
  std::string output = "text", out_file;
};

double scale_flag(const std::string& text, const char* flag) {
  try {
    return parse_scale(text);
  } catch (const Error& e) {
    throw Error(fmt::format("{} '{}': {}", flag, text, e.what()),
                "write a multiplier such as 0.5x, 0 or 80%");
  }
}

double whole(const std::string& text, const char* flag, double fallback) {
  if (text.empty()) return fallback;
  const double v = parse_quantity(text, Quantity::kCount);
  if (v < 1 || v != std::floor(v))
    throw Error(fmt::format("{} must be a whole number >= 1, got '{}'", flag, text));
  return v;
}

Scenario build_scenario(const WhatifFlags& f, const Analysis& a, const GpuDatabase& db) {
  Scenario s;
  const std::pair<const std::string*, const char*> buckets[] = {
      {&f.comm, "comm"},
      {&f.io, "io"},
      {&f.idle, "idle"},
      {&f.checkpoint, "checkpoint"},
      {&f.eval, "eval"},
      {&f.startup, "startup"},
      {&f.restart, "restart"},
      {&f.inefficiency, "compute_inefficiency"},
      {&f.generation, "generation"}};
  for (const auto& [text, name] : buckets)
    if (!text->empty()) s.scale[name] = scale_flag(*text, name);
  for (const auto& item : f.scale) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw Error(fmt::format("--scale '{}' is not BUCKET=FACTOR", item), "e.g. --scale eval=0");
    s.scale[item.substr(0, eq)] = scale_flag(item.substr(eq + 1), "--scale");
  }
  if (!f.overlap.empty()) s.overlap = parse_quantity(f.overlap, Quantity::kRatio);
  if (!f.stalls.empty()) s.stalls = scale_flag(f.stalls, "--stalls");
  if (!f.to_gpu.empty()) s.gpu = db.resolve(f.to_gpu).spec;
  s.peak = quantity(f.to_peak, Quantity::kFlopRate);
  if (!f.to_gpus.empty()) {
    const std::string& g = f.to_gpus;
    if (g.back() == 'x' || g.back() == 'X') {
      const double k = parse_quantity(g.substr(0, g.size() - 1), Quantity::kCount);
      if (!std::isfinite(a.gpus))
        throw Error("--to-gpus " + g + " needs the run's GPU count", "pass --gpus");
      s.gpus = a.gpus * k;
    } else {
      s.gpus = parse_quantity(g, Quantity::kCount);
    }
    if (*s.gpus < 1 || *s.gpus != std::floor(*s.gpus))
      throw Error(fmt::format("--to-gpus {} gives {} GPUs, not a whole number >= 1", g,
                              format_number(*s.gpus, 6)));
  }
  s.train_tokens = quantity(f.train_tokens, Quantity::kCount);
  s.price_per_gpu_hour = quantity(f.work.price, Quantity::kMoney);
  return s;
}

void reject_analytical_flags(const WhatifFlags& f) {
  const std::pair<const std::string*, const char*> only[] = {
      {&f.tp, "--tp"},
      {&f.pp, "--pp"},
      {&f.cp, "--cp"},
      {&f.vpp, "--vpp"},
      {&f.micro_batch, "--micro-batch"},
      {&f.grad_compression, "--grad-compression"},
      {&f.intra_bw, "--intra-node-bw"},
      {&f.checkpoint_time, "--checkpoint-time"},
      {&f.mtbf, "--mtbf"}};
  for (const auto& [text, flag] : only)
    if (!text->empty())
      throw Error(
          fmt::format(
              "{} describes a layout for the analytical estimate, not a change to a measured run",
              flag),
          "drop the log to estimate from the model, or drop the flag");
}

void reject_run_flags(const WhatifFlags& f) {
  const std::pair<const std::string*, const char*> only[] = {
      {&f.comm, "--comm"},
      {&f.io, "--io"},
      {&f.idle, "--idle"},
      {&f.checkpoint, "--checkpoint"},
      {&f.eval, "--eval"},
      {&f.startup, "--startup"},
      {&f.restart, "--restart"},
      {&f.inefficiency, "--compute-inefficiency"},
      {&f.stalls, "--stalls"},
      {&f.to_gpu, "--to-gpu"},
      {&f.to_gpus, "--to-gpus"},
      {&f.to_peak, "--to-peak"},
      {&f.generation, "--generation"}};
  for (const auto& [text, flag] : only)
    if (!text->empty())
      throw Error(fmt::format("{} changes a measured run; give the log to project", flag),
                  "mfu whatif RUN.log " + std::string(flag) + " ...");
  if (!f.scale.empty()) throw Error("--scale changes a measured run; give the log to project");
}

/// The spellings before the run's hardware took analyze's flag names.
void reject_old_spellings(const WhatifFlags& f) {
  const std::tuple<const std::string*, const char*, const char*> old[] = {
      {&f.old_run_gpu, "--run-gpu", "--gpu"},
      {&f.old_run_gpus, "--run-gpus", "--gpus"},
      {&f.old_run_peak, "--run-peak", "--peak"},
      {&f.old_global_batch, "--global-batch", "--batch"}};
  for (const auto& [text, was, now] : old)
    if (!text->empty())
      throw Error(fmt::format("{} is now {}", was, now),
                  "--gpu, --gpus and --peak describe the logged run (or, without a log, the "
                  "hardware) as in analyze; a change is --to-gpu, --to-gpus or --to-peak, and the "
                  "global batch is --batch as in calc");
}

/// `--no-stragglers` on the traces of every rank: what the late arrivals at collectives cost.
int run_no_stragglers(const WhatifFlags& f, const GlobalOptions& g) {
  for (const std::string* s :
       {&f.comm, &f.io, &f.idle, &f.checkpoint, &f.eval, &f.generation, &f.startup, &f.restart,
        &f.inefficiency, &f.overlap, &f.stalls, &f.to_gpu, &f.to_gpus, &f.to_peak, &f.train_tokens})
    if (!s->empty())
      throw Error("--no-stragglers is its own what-if",
                  "run the other changes in a separate 'mfu whatif' on the same inputs");
  const OutputFormat format = parse_output_format(f.output);
  const GpuDatabase db = load_gpu_db(g);
  HardwareFlags hw{f.gpu, f.gpus, f.dtype, f.peak};
  Output out(f.out_file, f.inputs);
  const Run run = ingest_with_progress(f.inputs, ingest_options(f.ingest, g), g);
  print_diagnostics(run, g);
  if (!run.trace)
    throw Error("--no-stragglers needs profiler traces of the ranks (the inputs are a log)",
                "pass every rank's PyTorch profiler trace, e.g. the directory torchtitan writes");
  const StragglerProjection p = project_no_stragglers(*run.trace);
  std::optional<double> mfu;
  try {
    mfu = analyze(run, analyze_options(f.model, hw, f.work), db).mfu_steady;
  } catch (const Error&) {
    // MFU needs the peak and the work; the step times do not.
  }
  std::string title;
  for (const auto& in : f.inputs) title += (title.empty() ? "" : ", ") + in;
  title += fmt::format(" ({} ranks)", run.trace->ranks.size());
  render_no_stragglers(p, mfu, title, format, out.stream());
  out.commit();
  return kExitOk;
}

int run_projection(const WhatifFlags& f, const GlobalOptions& g) {
  if (f.no_stragglers) return run_no_stragglers(f, g);
  reject_analytical_flags(f);
  const OutputFormat format = parse_output_format(f.output);
  const GpuDatabase db = load_gpu_db(g);
  HardwareFlags hw{f.gpu, f.gpus, f.dtype, f.peak};
  const AnalyzeOptions opt = analyze_options(f.model, hw, f.work);
  Output out(f.out_file, f.inputs);  // opened before the work: a bad path fails at once
  const Run run = ingest_with_progress(f.inputs, ingest_options(f.ingest, g), g);
  print_diagnostics(run, g);
  const Analysis a = analyze(run, opt, db);
  const Scenario s = build_scenario(f, a, db);
  const Projection p = project(a, s, db);
  std::string title;
  for (const auto& in : f.inputs) title += (title.empty() ? "" : ", ") + in;
  title += fmt::format(" ({})", a.format);
  render_projection(p, title, format, out.stream());
  out.commit();
  return kExitOk;
}

int run_estimate(const WhatifFlags& f, const GlobalOptions& g) {
  reject_run_flags(f);
  const OutputFormat format = parse_output_format(f.output);
  const GpuDatabase db = load_gpu_db(g);
  EstimateInputs in;
  const auto shape = build_model(f.model);
  if (!shape)
    throw Error("without a log, whatif estimates from a model",
                "pass --model PRESET (see 'mfu models') or the shape flags");
  in.model = *shape;
  if (!f.model.convention.empty()) in.convention = parse_convention(f.model.convention);
  if (!f.model.recompute.empty()) in.recompute = parse_recompute(f.model.recompute);
  if (!f.gpu.empty()) in.gpu = db.resolve(f.gpu).spec;
  if (!f.dtype.empty() && in.gpu && !f.peak.empty())
    throw Error("give --dtype with --gpu, or --peak alone");
  if (!f.dtype.empty() && in.gpu) {
    const auto pk = in.gpu->dense_peak(parse_dtype(f.dtype));
    if (!pk)
      throw Error(fmt::format("{} has no published dense {} peak", in.gpu->name, f.dtype),
                  "pass --peak");
    in.peak = *pk;
  }
  if (!f.peak.empty()) in.peak = parse_quantity(f.peak, Quantity::kFlopRate);
  if (f.gpus.empty()) throw Error("the estimate needs --gpus (the job's GPU count)");
  in.gpus = whole(f.gpus, "--gpus", 0);
  in.tp = whole(f.tp, "--tp", 1);
  in.pp = whole(f.pp, "--pp", 1);
  in.cp = whole(f.cp, "--cp", 1);
  in.vpp = whole(f.vpp, "--vpp", 1);
  in.gpus_per_node = whole(f.gpus_per_node, "--gpus-per-node", 8);
  const double dp = in.gpus / (in.tp * in.pp * in.cp);
  const auto micro_batches = quantity(f.work.micro_batches, Quantity::kCount);
  in.micro_batch = whole(f.micro_batch, "--micro-batch", 1);
  if (!f.work.batch.empty()) {
    in.global_batch = whole(f.work.batch, "--batch", 0);
    if (micro_batches && f.micro_batch.empty())
      in.micro_batch = in.global_batch / (*micro_batches * dp);
  } else if (micro_batches) {
    in.global_batch = *micro_batches * in.micro_batch * dp;
  } else {
    throw Error("the estimate needs the global batch",
                "pass --batch (sequences per step) or --micro-batches");
  }
  if (micro_batches && std::fabs(in.global_batch / (in.micro_batch * dp) - *micro_batches) > 1e-9)
    throw Error(fmt::format(
        "--micro-batches {} does not match global batch {} / (micro-batch {} x data-parallel {})",
        format_number(*micro_batches, 6), format_number(in.global_batch, 6),
        format_number(in.micro_batch, 6), format_number(dp, 6)));
  if (!f.model.seq_len.empty())
    in.model.seq_len = static_cast<std::int64_t>(parse_quantity(f.model.seq_len, Quantity::kCount));
  in.kernel_efficiency = parse_quantity(f.kernel_efficiency, Quantity::kRatio);
  if (!f.overlap.empty()) in.overlap = parse_quantity(f.overlap, Quantity::kRatio);
  in.grad_bytes = parse_quantity(f.grad_bytes, Quantity::kCount);
  if (!f.grad_compression.empty())
    in.grad_compression = parse_quantity(f.grad_compression, Quantity::kCount);
  if (!f.intra_bw.empty()) in.intra_node_bw = parse_quantity(f.intra_bw, Quantity::kBandwidth);
  in.inter_node_bw = parse_quantity(f.inter_bw, Quantity::kBandwidth);
  in.checkpoint_s = quantity(f.checkpoint_time, Quantity::kDuration);
  in.mtbf_s = quantity(f.mtbf, Quantity::kDuration);
  in.restart_s = parse_quantity(f.restart_time, Quantity::kDuration);
  if (in.checkpoint_s.has_value() != in.mtbf_s.has_value())
    throw Error("the checkpoint interval needs both --checkpoint-time and --mtbf");
  Output out(f.out_file);
  const StepEstimate e = estimate_step(in);
  const auto scaling = scaling_at_fixed_batch(in, {0.25, 0.5, 1, 2, 4});
  const std::string title = fmt::format(
      "{} on {} x {}, tp {} pp {}{} cp {} dp {}, {} micro-batches of {}, seq {}",
      in.model.name.empty() ? in.model.id : in.model.name, format_number(in.gpus, 6),
      in.gpu ? in.gpu->id : format_flop_rate(*in.peak), format_number(in.tp, 4),
      format_number(in.pp, 4), in.vpp > 1 ? fmt::format(" (v {})", format_number(in.vpp, 3)) : "",
      format_number(in.cp, 4), format_number(e.dp, 6), format_number(e.micro_batches, 6),
      format_number(in.micro_batch, 6), in.model.seq_len);
  render_estimate(e, scaling, title, format, out.stream());
  out.commit();
  return kExitOk;
}

}  // namespace

Runner add_whatif(CLI::App& app, GlobalOptions& g) {
  auto f = std::make_shared<WhatifFlags>();
  auto c = std::make_shared<ClusterFlags>();
  CLI::App* cmd = app.add_subcommand(
      "whatif", "What a change is worth: projected step time, MFU, time and cost");
  cmd->footer(
      "On a run: each change is a multiplier on the buckets of 'mfu analyze' (0.5x halves, 0 "
      "removes, 80% keeps\n"
      "80%), applied to the steady step and to the whole run. Another accelerator scales compute "
      "with its dense\n"
      "peak and communication with its interconnect; another GPU count keeps the global batch: "
      "compute and data\n"
      "per GPU shrink, the gradient all-reduce grows by the ring factor 2(n-1)/n.\n\n"
      "Without a log, from analytical models:\n"
      "  ring all-reduce 2(n-1)/n x bytes / bus bandwidth, all-gather and reduce-scatter (n-1)/n\n"
      "    (NVIDIA nccl-tests doc/PERFORMANCE.md);\n"
      "  tensor parallelism: 4 all-reduces of b x s x h per layer, 6 with full recomputation\n"
      "    (Narayanan et al. 2021, Sec. 3.2; Korthikanti et al. 2022);\n"
      "  pipeline bubble (p-1)/(m+p-1) of the step, (p-1)/(v m) of the work when interleaved\n"
      "    (Huang et al. 2019, GPipe; Narayanan et al. 2021, Sec. 2.2);\n"
      "  data-parallel scaling at a fixed global batch, gradient compression by a ratio;\n"
      "  recomputation as extra FLOPs (HFU), compute at an assumed share of the peak "
      "(--kernel-efficiency);\n"
      "  the checkpoint interval that minimises lost time (Young 1974, sqrt(2 d MTBF); Daly 2006) "
      "and the\n"
      "    expected loss d/tau + (tau/2 + restart)/MTBF.\n\n"
      "Examples:\n"
      "  mfu whatif run.log --comm 0.5x                  # the classic example: 330 ms -> 290 ms, "
      "34.0% -> 38.7%\n"
      "  mfu whatif run.log --io 0 --overlap 80% --stalls 0\n"
      "  mfu whatif run.log --to-gpu h200 --to-gpus 2x --train-tokens 15T --price-per-gpu-hour "
      "2.50\n"
      "  mfu whatif --model llama3-70b --gpu h100 --gpus 1024 --tp 8 --pp 8 --micro-batches 32 "
      "--batch 1024 \\\n"
      "             --seq-len 8192 --checkpoint-time 60s --mtbf 24h\n"
      "  mfu whatif cluster --nodes 64 --gpus-per-node 8 --jobs jobs.csv");
  cmd->add_option("inputs", f->inputs,
                  "A run's log files or directory (omit for the analytical estimate)");
  // The scenario.
  const char* scen = "Changes (to a run)";
  cmd->add_option("--comm", f->comm, "Scale exposed communication, e.g. 0.5x")->group(scen);
  cmd->add_option("--io", f->io, "Scale data-loader waits, e.g. 0")->group(scen);
  cmd->add_option("--idle", f->idle, "Scale idle time and the pipeline bubble")->group(scen);
  cmd->add_option("--checkpoint", f->checkpoint,
                  "Scale checkpoint time, e.g. 0.1x for asynchronous saves")
      ->group(scen);
  cmd->add_option("--eval", f->eval, "Scale evaluation time")->group(scen);
  cmd->add_option("--generation", f->generation,
                  "Scale RL rollout time (generation, scoring), e.g. 0.5x for a faster engine")
      ->group(scen);
  cmd->add_option("--startup", f->startup, "Scale startup and warm-up")->group(scen);
  cmd->add_option("--restart", f->restart, "Scale restarts and recovery")->group(scen);
  cmd->add_option("--compute-inefficiency", f->inefficiency,
                  "Scale compute time below peak (better kernels)")
      ->group(scen);
  cmd->add_option("--scale", f->scale, "BUCKET=FACTOR for any bucket of the waterfall (repeatable)")
      ->group(scen);
  cmd->add_option("--stalls", f->stalls, "Scale the excess of stalled steps, e.g. 0")->group(scen);
  cmd->add_option("--overlap", f->overlap,
                  "Share of exposed communication hidden under compute, e.g. 80%")
      ->group(scen);
  cmd->add_flag("--no-stragglers", f->no_stragglers,
                "On every rank's profiler traces: the step time if each collective started when "
                "the median rank arrived, and which ranks cost what")
      ->group(scen);
  cmd->add_option("--to-gpu", f->to_gpu, "Another accelerator for the logged run")->group(scen);
  cmd->add_option("--to-peak", f->to_peak, "Another dense peak per GPU, e.g. 989.5T")->group(scen);
  cmd->add_option("--to-gpus", f->to_gpus, "Another GPU count at the same global batch: 256 or 2x")
      ->group(scen);
  cmd->add_option("--train-tokens", f->train_tokens,
                  "Token budget, e.g. 15T: adds time to train and GPU-hours")
      ->group(scen);
  // The measured run.
  add_model_flags(cmd, f->model);
  add_work_flags(cmd, f->work);
  add_ingest_flags(cmd, f->ingest);
  const char* run = "The measured run (as for mfu analyze), or the hardware without a log";
  cmd->add_option("--gpu", f->gpu, "Accelerator the log ran on (when it does not say)")->group(run);
  cmd->add_option("--gpus", f->gpus, "GPUs of the job (when the log does not say)")->group(run);
  cmd->add_option("--peak", f->peak, "Dense peak per GPU, e.g. 989.5T")->group(run);
  for (auto [flag, target] :
       {std::pair{"--run-gpu", &f->old_run_gpu}, std::pair{"--run-gpus", &f->old_run_gpus},
        std::pair{"--run-peak", &f->old_run_peak},
        std::pair{"--global-batch", &f->old_global_batch}})
    cmd->add_option(flag, *target)->group("");  // hidden: answered with the new name
  cmd->add_option("--dtype", f->dtype, "Compute dtype for the peaks: bf16 (default), fp8, ...")
      ->group(run);
  // Analytical mode.
  const char* est = "Layout (without a log)";
  cmd->add_option("--tp", f->tp, "Tensor-parallel size")->group(est);
  cmd->add_option("--pp", f->pp, "Pipeline-parallel stages")->group(est);
  cmd->add_option("--cp", f->cp, "Context-parallel size")->group(est);
  cmd->add_option("--vpp", f->vpp, "Interleaved chunks per pipeline stage")->group(est);
  cmd->add_option("--micro-batch", f->micro_batch,
                  "Sequences per micro-batch (default: from --micro-batches, else 1)")
      ->group(est);
  cmd->add_option("--kernel-efficiency", f->kernel_efficiency,
                  "Share of the peak compute kernels reach (assumed)")
      ->capture_default_str()
      ->group(est);
  cmd->add_option("--grad-bytes", f->grad_bytes, "Bytes per gradient element in the all-reduce")
      ->capture_default_str()
      ->group(est);
  cmd->add_option("--grad-compression", f->grad_compression, "Gradient compression ratio, e.g. 4")
      ->group(est);
  cmd->add_option("--intra-node-bw", f->intra_bw,
                  "Bus bandwidth per GPU inside a node (default: half the datasheet link)")
      ->group(est);
  cmd->add_option("--inter-node-bw", f->inter_bw, "Bus bandwidth per GPU across nodes")
      ->capture_default_str()
      ->group(est);
  cmd->add_option("--gpus-per-node", f->gpus_per_node, "GPUs per node")
      ->capture_default_str()
      ->group(est);
  cmd->add_option("--checkpoint-time", f->checkpoint_time,
                  "Blocking time of one checkpoint save, e.g. 60s")
      ->group(est);
  cmd->add_option("--mtbf", f->mtbf, "Mean time between failures of the whole job, e.g. 24h")
      ->group(est);
  cmd->add_option("--restart-time", f->restart_time, "Time to restart after a failure")
      ->capture_default_str()
      ->group(est);
  cmd->add_option("--output", f->output, "text, json or markdown")->capture_default_str();
  cmd->add_option("-o,--output-file", f->out_file, "Write the report to FILE instead of stdout");

  CLI::App* cl = cmd->add_subcommand(
      "cluster", "Idle GPU time to scheduling fragmentation, spread versus pack");
  cl->footer(
      "Replays a job trace first come first served (no backfilling) on identical nodes, under two "
      "placements:\n"
      "spread (the node with the most free GPUs) and pack (best fit: the fewest free GPUs that "
      "still fit). A job\n"
      "larger than a node takes whole free nodes. Idle to fragmentation is free GPU time while the "
      "job at the head\n"
      "of the queue needed no more GPUs than the cluster had free in total.\n\n"
      "The trace is a CSV with a header and at least submit_s,gpus,duration_s (seconds); other "
      "columns are ignored.\n"
      "Helios/AcmeTrace columns (gpu_num, submit_time as a date-time, duration or "
      "start_time/end_time) work too.\n\n"
      "Example:\n"
      "  mfu whatif cluster --nodes 2 --gpus-per-node 8 --jobs examples/jobs.csv");
  cl->add_option("--nodes", c->nodes, "Nodes in the cluster")->required();
  cl->add_option("--gpus-per-node", c->gpus_per_node, "GPUs per node")->capture_default_str();
  cl->add_option("--jobs", c->jobs, "Job trace CSV (plain, .gz or .zst)")->required();
  cl->add_option("--output", c->output, "text, json or markdown")->capture_default_str();
  cl->add_option("-o,--output-file", c->out_file, "Write the report to FILE instead of stdout");

  return [f, c, cl, &g]() {
    if (cl->parsed()) {
      const OutputFormat format = parse_output_format(c->output);
      if (c->nodes < 1 || c->gpus_per_node < 1)
        throw Error("--nodes and --gpus-per-node must be at least 1");
      Output out(c->out_file, {c->jobs});
      const JobTrace trace = load_jobs(c->jobs);
      ClusterReport r;
      r.nodes = c->nodes;
      r.gpus_per_node = c->gpus_per_node;
      r.origin = c->jobs;
      r.rows = trace.rows;
      r.zero_gpu_jobs = trace.zero_gpu_jobs;
      r.spread = replay_cluster(trace.jobs, c->nodes, c->gpus_per_node, Placement::kSpread);
      r.pack = replay_cluster(trace.jobs, c->nodes, c->gpus_per_node, Placement::kPack);
      render_cluster(r, format, out.stream());
      out.commit();
      return kExitOk;
    }
    reject_old_spellings(*f);
    if (f->no_stragglers && f->inputs.empty())
      throw Error("--no-stragglers needs the profiler traces of the ranks",
                  "mfu whatif TRACE_DIR --no-stragglers");
    return f->inputs.empty() ? run_estimate(*f, g) : run_projection(*f, g);
  };
}

}  // namespace mfu::cli
