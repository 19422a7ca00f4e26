// `mfu merge SUMMARIES...` and `mfu fleet PATH...`: many jobs at once. A job is analysed on its
// own and kept only as its summary (bounded memory); summaries add up exactly.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_common.hpp"
#include "job_labels.hpp"
#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "mfu/scheduler.hpp"
#include "mfu/summary.hpp"
#include "mfu/units.hpp"
#include "output.hpp"
#include "progress.hpp"

namespace mfu::cli {
namespace {

namespace fs = std::filesystem;

JobSummary read_summaries(std::istream& in, const std::string& origin, JobSummary acc, bool& any) {
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    acc = any ? merge_summaries(acc, parse_summary(line, fmt::format("{}:{}", origin, n)))
              : parse_summary(line, fmt::format("{}:{}", origin, n));
    any = true;
  }
  return acc;
}

/// The jobs under the paths: a file is a job; in a directory each file is a job and each
/// sub-directory one job (its rank logs or pieces, read together as analyze reads them).
std::vector<std::vector<std::string>> jobs_under(const std::vector<std::string>& paths) {
  std::vector<std::vector<std::string>> jobs;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      jobs.push_back({p});
      continue;
    }
    std::vector<std::string> entries;
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().rfind('.', 0) != 0) entries.push_back(it->path().string());
    std::sort(entries.begin(), entries.end());
    for (const auto& e : entries) jobs.push_back({e});
  }
  return jobs;
}

struct JobResult {
  std::string name;
  std::optional<JobSummary> summary;
  std::string error;
};

/// Analyses every job on all cores; each keeps only its summary or its error.
std::vector<JobResult> analyse_jobs(const std::vector<std::vector<std::string>>& jobs,
                                    const AnalyzeOptions& opt, const GpuDatabase& db,
                                    const JobLabels& labels) {
  std::vector<JobResult> results(jobs.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    IngestOptions io;
    io.threads = 1;  // the jobs are the parallelism
    for (std::size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      results[i].name = jobs[i].front();
      try {
        const Run run = ingest(jobs[i], io);
        JobSummary s = summarize_job(analyze(run, opt, db), run);
        for (const auto& [key, value] : labels.of(jobs[i].front()))
          s.gpu_ns_by[key][value] = s.gpu_ns;
        results[i].summary = std::move(s);
      } catch (const Error& e) {
        results[i].error = e.what();
      } catch (const std::exception& e) {
        results[i].error = fmt::format("a bug in mfu: {}", e.what());
      }
    }
  };
  const unsigned n = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                                     static_cast<unsigned>(jobs.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < n; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return results;
}

double lost_gpu_hours(const JobSummary& s) {
  const auto it = s.bucket_gpu_ns.find("compute");
  const ExactCount ideal = it == s.bucket_gpu_ns.end() ? 0 : it->second;
  return static_cast<double>(s.gpu_ns - ideal) * 1e-9 / 3600.0;
}

void fleet_text(const JobSummary& fleet, std::vector<JobResult>& results, OutputFormat format,
                std::ostream& out) {
  render_summary(fleet, format, out);
  std::vector<const JobResult*> ok;
  for (const auto& r : results)
    if (r.summary) ok.push_back(&r);
  std::sort(ok.begin(), ok.end(), [](const JobResult* a, const JobResult* b) {
    return lost_gpu_hours(*a->summary) > lost_gpu_hours(*b->summary);
  });
  out << "\nworst jobs by GPU time lost (all but compute at peak)\n";
  for (std::size_t i = 0; i < std::min<std::size_t>(10, ok.size()); ++i)
    out << fmt::format("  {:<48} {:>22} lost, MFU {}\n", ok[i]->name,
                       format_gpu_time(lost_gpu_hours(*ok[i]->summary)),
                       std::isfinite(ok[i]->summary->mfu()) ? format_percent(ok[i]->summary->mfu())
                                                            : std::string("unknown"));
  std::vector<const JobResult*> by_mfu;
  for (const auto* r : ok)
    if (std::isfinite(r->summary->mfu())) by_mfu.push_back(r);
  std::sort(by_mfu.begin(), by_mfu.end(), [](const JobResult* a, const JobResult* b) {
    return a->summary->mfu() < b->summary->mfu();
  });
  if (!by_mfu.empty()) out << "\nlowest MFU\n";
  for (std::size_t i = 0; i < std::min<std::size_t>(10, by_mfu.size()); ++i)
    out << fmt::format("  {:<48} MFU {:>6} on {}\n", by_mfu[i]->name,
                       format_percent(by_mfu[i]->summary->mfu()),
                       format_gpu_time(by_mfu[i]->summary->gpu_hours()));
  bool header = false;
  for (const auto& r : results) {
    if (r.summary) continue;
    if (!header) out << "\njobs that could not be analysed\n";
    header = true;
    out << fmt::format("  {}: {}\n", r.name, r.error);
  }
}

/// One CSV row per job: its GPU-hours, MFU and GPU-hours per bucket, or why it was not read.
void fleet_csv(const std::vector<JobResult>& results, std::ostream& out) {
  out << "job,analysed,gpu_hours,mfu";
  for (std::size_t b = 0; b < kBucketCount; ++b)
    out << ',' << bucket_key(static_cast<BucketId>(b)) << "_gpu_hours";
  out << ",reason\n";
  auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
    return q + "\"";
  };
  for (const auto& r : results) {
    out << quoted(r.name) << ',' << (r.summary ? 1 : 0);
    if (r.summary) {
      const JobSummary& s = *r.summary;
      out << fmt::format(",{},{}", s.gpu_hours(),
                         std::isfinite(s.mfu()) ? fmt::format("{}", s.mfu()) : std::string());
      for (std::size_t b = 0; b < kBucketCount; ++b) {
        const auto it = s.bucket_gpu_ns.find(bucket_key(static_cast<BucketId>(b)));
        out << ',' << (it == s.bucket_gpu_ns.end() ? 0.0 : double(it->second) * 1e-9 / 3600);
      }
      out << ",\n";
    } else {
      out << ",,";
      for (std::size_t b = 0; b < kBucketCount; ++b) out << ',';
      out << ',' << quoted(r.error) << '\n';
    }
  }
}

/// The cluster's GPU time from its capacity down to the jobs: what nobody held (while jobs
/// waited that would have fit, and otherwise), what failed jobs held, what the rest held.
void scheduler_text(const SchedulerShare& s, int cluster_gpus, const JobSummary& fleet,
                    std::ostream& out) {
  auto row = [&](const std::string& what, double h) {
    out << fmt::format("  {:<58} {:>22} {:>7}\n", what, format_gpu_time(h),
                       format_percent(s.capacity_gpu_h > 0 ? h / s.capacity_gpu_h : 0));
  };
  out << fmt::format("the cluster: {} over {} = {} (Slurm accounting, {} with GPUs)\n",
                     count_of(cluster_gpus, "GPU"), format_duration(s.span_s),
                     format_gpu_time(s.capacity_gpu_h), count_of(double(s.gpu_jobs), "job"));
  row("held by nobody while a job waited that would have fit", s.idle_waiting_gpu_h);
  row("held by nobody, no job waiting that would fit", s.idle_gpu_h);
  row(fmt::format("held by failed, cancelled or timed-out jobs ({})", s.wasted_jobs),
      s.wasted_gpu_h);
  row("held by the other jobs", s.allocated_gpu_h - s.wasted_gpu_h);
  row("  of which the jobs analysed below", fleet.gpu_hours());
  out << '\n';
}

nlohmann::json scheduler_json(const SchedulerShare& s, int cluster_gpus) {
  return {{"cluster_gpus", cluster_gpus},
          {"span_s", s.span_s},
          {"capacity_gpu_hours", s.capacity_gpu_h},
          {"idle_while_jobs_waited_gpu_hours", s.idle_waiting_gpu_h},
          {"idle_gpu_hours", s.idle_gpu_h},
          {"wasted_gpu_hours", s.wasted_gpu_h},
          {"allocated_gpu_hours", s.allocated_gpu_h},
          {"jobs", s.jobs},
          {"wasted_jobs", s.wasted_jobs}};
}

}  // namespace

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
    JobSummary acc;
    bool any = false;
    if (f->inputs.empty() || (f->inputs.size() == 1 && f->inputs[0] == "-")) {
      acc = read_summaries(std::cin, "stdin", acc, any);
    } else {
      for (const auto& p : f->inputs) {
        std::ifstream in(p);
        if (!in) throw Error(fmt::format("cannot open '{}'", p), "check the path");
        acc = read_summaries(in, p, acc, any);
      }
    }
    if (!any)
      throw Error("no job summary in the input", "give lines of 'mfu analyze --output summary'");
    render_summary(acc, format, out.stream());
    out.commit();
    return kExitOk;
  };
}

struct FleetFlags {
  std::vector<std::string> paths;
  ModelFlags model;
  HardwareFlags hw;
  WorkFlags work;
  std::string sacct, group_by, meta;
  int cluster_gpus = 0;
  std::string output = "text", out_file;
};

/// `mfu fleet`: every job analysed, the fleet's summary and report, the scheduler's share.
int run_fleet(const FleetFlags& f, const GlobalOptions& g) {
  const OutputFormat format = parse_output_format(f.output);
  const AnalyzeOptions opt = analyze_options(f.model, f.hw, f.work);
  const GpuDatabase db = load_gpu_db(g);
  if (!f.sacct.empty() && f.cluster_gpus < 1)
    throw Error("--sacct needs --cluster-gpus: the share of a cluster is of its capacity");
  std::optional<SchedulerShare> share;
  if (!f.sacct.empty()) share = scheduler_share(load_sacct(f.sacct), f.cluster_gpus);
  std::vector<std::string> read = f.paths;
  if (!f.sacct.empty()) read.push_back(f.sacct);
  Output out(f.out_file, read);
  const JobLabels labels(f.group_by, f.meta);
  const auto jobs = jobs_under(f.paths);
  if (jobs.empty()) throw Error("no job under the paths given", "give log files or directories");
  std::vector<JobResult> results;
  {
    ProgressLine progress(f.paths, g);  // on a terminal only
    results = analyse_jobs(jobs, opt, db, labels);
  }
  JobSummary fleet;
  bool any = false;
  for (const auto& r : results)
    if (r.summary) {
      fleet = any ? merge_summaries(fleet, *r.summary) : *r.summary;
      any = true;
    }
  if (!any) {
    for (const auto& r : results) warn(fmt::format("{}: {}", r.name, r.error));
    throw Error("no job could be analysed", "the warnings above say why for each");
  }
  if (format == OutputFormat::kSummary) {
    render_summary(fleet, format, out.stream());
  } else if (format == OutputFormat::kCsv) {
    fleet_csv(results, out.stream());
  } else if (format == OutputFormat::kJson) {
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["fleet"] = nlohmann::json::parse(summary_json(fleet));
    j["failed"] = nlohmann::json::array();
    for (const auto& r : results)
      if (!r.summary) j["failed"].push_back({{"input", r.name}, {"reason", r.error}});
    if (share) j["scheduler"] = scheduler_json(*share, f.cluster_gpus);
    out.stream() << j.dump(2) << '\n';
  } else {
    if (share) scheduler_text(*share, f.cluster_gpus, fleet, out.stream());
    fleet_text(fleet, results, format, out.stream());
  }
  out.commit();
  for (const auto& r : results)
    if (!r.summary && format != OutputFormat::kText && format != OutputFormat::kMarkdown &&
        format != OutputFormat::kCsv)
      warn(fmt::format("{}: not analysed: {}", r.name, r.error));
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
  cmd->add_option("--cluster-gpus", f->cluster_gpus, "GPUs in the cluster (with --sacct)");
  cmd->add_option("--group-by", f->group_by,
                  "A path pattern whose {keys} group the jobs, e.g. 'runs/{team}/{job}/'");
  cmd->add_option("--meta", f->meta,
                  "A job table (CSV: the job's name first, e.g. job,user,team,project): its "
                  "columns group the jobs");
  cmd->add_option("--output", f->output,
                  "text, markdown, json, csv (a row per job) or summary (one line)")
      ->capture_default_str();
  cmd->add_option("-o,--output-file", f->out_file, "Write the report to FILE instead of stdout");
  return [f, &g] { return run_fleet(*f, g); };
}

}  // namespace mfu::cli
