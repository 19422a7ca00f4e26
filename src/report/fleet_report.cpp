// Renders `mfu fleet`: the scheduler's share of the cluster, the fleet's summary, the worst
// jobs by lost GPU time and by MFU, and the jobs that could not be analysed; or a CSV row per
// job, or all of it as JSON.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "mfu/error.hpp"
#include "mfu/report.hpp"
#include "mfu/units.hpp"

namespace mfu {
namespace {

double lost_gpu_hours(const JobSummary& s) {
  const auto it = s.bucket_gpu_ns.find("compute");
  const ExactCount ideal = it == s.bucket_gpu_ns.end() ? 0 : it->second;
  return static_cast<double>(s.gpu_ns - ideal) * 1e-9 / 3600.0;
}

void fleet_text(const JobSummary& fleet, const std::vector<FleetJob>& results, OutputFormat format,
                std::ostream& out) {
  render_summary(fleet, format, out);
  std::vector<const FleetJob*> ok;
  for (const auto& r : results)
    if (r.summary) ok.push_back(&r);
  std::sort(ok.begin(), ok.end(), [](const FleetJob* a, const FleetJob* b) {
    return lost_gpu_hours(*a->summary) > lost_gpu_hours(*b->summary);
  });
  out << "\nworst jobs by GPU time lost (all but compute at peak)\n";
  for (std::size_t i = 0; i < std::min<std::size_t>(10, ok.size()); ++i)
    out << fmt::format("  {:<48} {:>22} lost, MFU {}\n", ok[i]->name,
                       format_gpu_time(lost_gpu_hours(*ok[i]->summary)),
                       std::isfinite(ok[i]->summary->mfu()) ? format_percent(ok[i]->summary->mfu())
                                                            : std::string("unknown"));
  std::vector<const FleetJob*> by_mfu;
  for (const auto* r : ok)
    if (std::isfinite(r->summary->mfu())) by_mfu.push_back(r);
  std::sort(by_mfu.begin(), by_mfu.end(), [](const FleetJob* a, const FleetJob* b) {
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
void fleet_csv(const std::vector<FleetJob>& results, std::ostream& out) {
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

void render_fleet(const FleetReport& f, const SchedulerShare* share, int cluster_gpus,
                  OutputFormat format, std::ostream& out) {
  if (!f.total) throw Error("no job could be analysed", "the reasons are listed for each job");
  switch (format) {
    case OutputFormat::kSummary: render_summary(*f.total, format, out); return;
    case OutputFormat::kCsv: fleet_csv(f.jobs, out); return;
    case OutputFormat::kJson: {
      nlohmann::json j;
      j["schema_version"] = kJsonSchemaVersion;
      j["fleet"] = nlohmann::json::parse(summary_json(*f.total));
      j["failed"] = nlohmann::json::array();
      for (const auto& r : f.jobs)
        if (!r.summary) j["failed"].push_back({{"input", r.name}, {"reason", r.error}});
      if (share) j["scheduler"] = scheduler_json(*share, cluster_gpus);
      out << j.dump(2) << '\n';
      return;
    }
    case OutputFormat::kText:
    case OutputFormat::kMarkdown:
      if (share) scheduler_text(*share, cluster_gpus, *f.total, out);
      fleet_text(*f.total, f.jobs, format, out);
      return;
    case OutputFormat::kHtml: break;
  }
  throw Error("mfu fleet writes text, markdown, json, csv or summary");
}

}  // namespace mfu
