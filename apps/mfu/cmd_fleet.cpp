// `mfu merge SUMMARIES...` and `mfu fleet PATH...`: many jobs at once. A job is analysed on its
// own and kept only as its summary (bounded memory); summaries add up exactly.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <iterator>

#include "cli_common.hpp"
#include "mfu/error.hpp"
#include "mfu/fleet.hpp"
#include "mfu/scheduler.hpp"
#include "mfu/summary.hpp"
#include "mfu/whatif.hpp"
#include "output.hpp"
#include "progress.hpp"

namespace mfu::cli {

Runner add_merge(CLI::App& app, GlobalOptions& /*g*/) {
  struct Flags {
    std::vector<std::string> inputs;
    std::string output = "summary", out_file;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Add up job summaries exactly (lines of 'mfu analyze --output summary')");
  cmd->footer(
      "Examples:\n"
      "  for f in runs/*.log; do mfu analyze \"$f\" --output summary; done > jobs.jsonl\n"
      "  mfu merge jobs.jsonl --output text\n"
      "  cat part-*.jsonl | mfu merge > fleet.jsonl      # any order and grouping: the same");
  cmd->add_option("summaries", f->inputs, "Files of summary lines ('-' or none: stdin)");
  cmd->add_option("--output", f->output, "summary (one line), json, text or markdown")
      ->capture_default_str();
  cmd->add_option("-o,--output-file", f->out_file, "Write to FILE instead of stdout");
  return [f] {
    const OutputFormat format = parse_output_format(f->output);
    Output out(f->out_file, f->inputs);
    std::optional<JobSummary> total;
    if (f->inputs.empty() || (f->inputs.size() == 1 && f->inputs[0] == "-")) {
      const std::string text{std::istreambuf_iterator<char>(std::cin), {}};
      merge_summary_lines(text, "stdin", total);
    } else {
      for (const auto& p : f->inputs) {
        std::ifstream in(p);
        if (!in) throw Error(fmt::format("cannot open '{}'", p), "check the path");
        const std::string text{std::istreambuf_iterator<char>(in), {}};
        merge_summary_lines(text, p, total);
      }
    }
    if (!total)
      throw Error("no job summary in the input", "give lines of 'mfu analyze --output summary'");
    render_summary(*total, format, out.stream());
    out.commit();
    return kExitOk;
  };
}

struct FleetFlags {
  std::vector<std::string> paths;
  ModelFlags model;
  HardwareFlags hw;
  WorkFlags work;
  std::string sacct, jobs, group_by, meta;
  int cluster_gpus = 0;
  std::string output = "text", out_file;
};

/// `mfu fleet`: every job analysed, the fleet's summary and report, the scheduler's share.
int run_fleet(const FleetFlags& f, const GlobalOptions& g) {
  const OutputFormat format = parse_output_format(f.output);
  FleetOptions opt;
  opt.analysis = analyze_options(f.model, f.hw, f.work);
  opt.group_by = f.group_by;
  opt.job_table = f.meta;
  const GpuDatabase db = load_gpu_db(g);
  const std::string& accounting = f.sacct.empty() ? f.jobs : f.sacct;
  if (!accounting.empty() && f.cluster_gpus < 1)
    throw Error(fmt::format("{} needs --cluster-gpus: the share of a cluster is of its capacity",
                            f.sacct.empty() ? "--jobs" : "--sacct"));
  std::optional<SchedulerShare> share;
  if (!f.sacct.empty()) share = scheduler_share(load_sacct(f.sacct), f.cluster_gpus);
  if (!f.jobs.empty())
    share =
        scheduler_share(accounting_from_jobs(load_jobs(f.jobs), f.cluster_gpus), f.cluster_gpus);
  std::vector<std::string> read = f.paths;
  if (!accounting.empty()) read.push_back(accounting);
  Output out(f.out_file, read);
  FleetReport report;
  {
    ProgressLine progress(f.paths, g);  // on a terminal only
    report = analyze_fleet(f.paths, opt, db);
  }
  if (!report.total)
    for (const auto& r : report.jobs) warn(fmt::format("{}: {}", r.name, r.error));
  render_fleet(report, share ? &*share : nullptr, f.cluster_gpus, format, out.stream(),
               render_options(g, out.to_stdout()));
  out.commit();
  // The text and CSV reports list the jobs not analysed; the JSON and summary line go to a
  // program, so people see them on stderr.
  if (format == OutputFormat::kSummary)
    for (const auto& r : report.jobs)
      if (!r.summary) warn(fmt::format("{}: not analysed: {}", r.name, r.error));
  return kExitOk;
}

Runner add_fleet(CLI::App& app, GlobalOptions& g) {
  auto f = std::make_shared<FleetFlags>();
  CLI::App* cmd = app.add_subcommand(
      "fleet", "Many jobs at once: the fleet's MFU, where its GPU time went, the worst jobs");
  cmd->footer(
      "Each file under the paths is a job, and each sub-directory one job (its rank logs or\n"
      "pieces). Jobs are analysed in parallel and kept as summaries; those that cannot be\n"
      "analysed are listed with the reason. The flags apply to every job.\n\n"
      "Examples:\n"
      "  mfu fleet runs/ --gpu h100\n"
      "  mfu fleet runs/ --output summary > fleet.jsonl");
  cmd->add_option("paths", f->paths, "Job logs, or directories of them")->required();
  add_model_flags(cmd, f->model);
  add_hardware_flags(cmd, f->hw);
  add_work_flags(cmd, f->work);
  cmd->add_option("--sacct", f->sacct,
                  "Slurm accounting of the cluster (sacct --parsable2 --format=JobID,JobName,"
                  "Submit,Start,End,AllocTRES,NNodes,State): adds the scheduler's share");
  cmd->add_option("--jobs", f->jobs,
                  "Or a job trace CSV as 'whatif cluster' reads (submit_s,gpus,duration_s; "
                  "start_time and state where known): adds the scheduler's share")
      ->excludes(cmd->get_option("--sacct"));
  cmd->add_option("--cluster-gpus", f->cluster_gpus,
                  "GPUs in the cluster (with --sacct or --jobs)");
  cmd->add_option("--group-by", f->group_by,
                  "A path pattern whose {keys} group the jobs, e.g. 'runs/{team}/{job}/'");
  cmd->add_option("--meta", f->meta,
                  "A job table (CSV: the job's name first, e.g. job,user,team,project): its "
                  "columns group the jobs");
  cmd->add_option("--output", f->output,
                  "text, markdown, json, csv (a row per job), html (a page) or summary (one line)")
      ->capture_default_str();
  cmd->add_option("-o,--output-file", f->out_file, "Write the report to FILE instead of stdout");
  return [f, &g] { return run_fleet(*f, g); };
}

}  // namespace mfu::cli
