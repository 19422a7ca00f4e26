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
#include "report/fleet_common.hpp"

namespace mfu {
namespace {

using detail::lost_gpu_hours;
using detail::lowest_mfu_jobs;
using detail::share_rows;
using detail::worst_jobs;

void fleet_text(const JobSummary& fleet, const std::vector<FleetJob>& results, OutputFormat format,
                std::ostream& out) {
  render_summary(fleet, format, out);
  const auto worst = worst_jobs(results, 10);
  if (!worst.empty()) out << "\nworst jobs by GPU time lost (all but compute at peak)\n";
  for (const FleetJob* j : worst)
    out << fmt::format("  {:<48} {:>22} lost, MFU {}\n", j->name,
                       format_gpu_time(lost_gpu_hours(*j->summary)),
                       std::isfinite(j->summary->mfu()) ? format_percent(j->summary->mfu())
                                                        : std::string("unknown"));
  const auto lowest = lowest_mfu_jobs(results, 10);
  if (!lowest.empty()) out << "\nlowest MFU\n";
  for (const FleetJob* j : lowest)
    out << fmt::format("  {:<48} MFU {:>6} on {}\n", j->name, format_percent(j->summary->mfu()),
                       format_gpu_time(j->summary->gpu_hours()));
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
        out << ',' << (it == s.bucket_gpu_ns.end() ? 0.0 : detail::gpu_hours_of(it->second));
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
  out << fmt::format("the cluster: {} over {} = {} ({}, {} with GPUs)\n",
                     count_of(cluster_gpus, "GPU"), format_duration(s.span_s),
                     format_gpu_time(s.capacity_gpu_h), s.source,
                     count_of(double(s.gpu_jobs), "job"));
  for (const auto& r : share_rows(s, fleet))
    out << fmt::format("  {:<58} {:>22} {:>7}\n", r.what, format_gpu_time(r.gpu_h),
                       format_percent(s.capacity_gpu_h > 0 ? r.gpu_h / s.capacity_gpu_h : 0));
  out << '\n';
}

nlohmann::json scheduler_json(const SchedulerShare& s, int cluster_gpus) {
  return {{"cluster_gpus", cluster_gpus},
          {"source", s.source},
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

namespace detail {

double gpu_hours_of(ExactCount gpu_ns) {
  return static_cast<double>(gpu_ns) * 1e-9 / 3600.0;
}

std::vector<std::pair<std::string, ExactCount>> largest_first(
    const std::map<std::string, ExactCount>& by_key) {
  std::vector<std::pair<std::string, ExactCount>> rows(by_key.begin(), by_key.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return rows;
}

double lost_gpu_hours(const JobSummary& s) {
  const auto it = s.bucket_gpu_ns.find("compute");
  const ExactCount ideal = it == s.bucket_gpu_ns.end() ? 0 : it->second;
  return gpu_hours_of(s.gpu_ns - ideal);
}

std::vector<const FleetJob*> worst_jobs(const std::vector<FleetJob>& jobs, std::size_t n) {
  std::vector<const FleetJob*> ok;
  for (const auto& j : jobs)
    if (j.summary) ok.push_back(&j);
  std::stable_sort(ok.begin(), ok.end(), [](const FleetJob* a, const FleetJob* b) {
    return lost_gpu_hours(*a->summary) > lost_gpu_hours(*b->summary);
  });
  if (ok.size() > n) ok.resize(n);
  return ok;
}

std::vector<const FleetJob*> lowest_mfu_jobs(const std::vector<FleetJob>& jobs, std::size_t n) {
  std::vector<const FleetJob*> known;
  for (const auto& j : jobs)
    if (j.summary && std::isfinite(j.summary->mfu())) known.push_back(&j);
  std::stable_sort(known.begin(), known.end(), [](const FleetJob* a, const FleetJob* b) {
    return a->summary->mfu() < b->summary->mfu();
  });
  if (known.size() > n) known.resize(n);
  return known;
}

std::vector<ShareRow> share_rows(const SchedulerShare& s, const JobSummary& fleet) {
  return {{"held by nobody while a job waited that would have fit", s.idle_waiting_gpu_h},
          {"held by nobody, no job waiting that would fit", s.idle_gpu_h},
          {fmt::format("held by failed, cancelled or timed-out jobs ({})", s.wasted_jobs),
           s.wasted_gpu_h},
          {"held by the other jobs", s.allocated_gpu_h - s.wasted_gpu_h},
          {"  of which the jobs analysed below", fleet.gpu_hours()}};
}

}  // namespace detail

void render_fleet(const FleetReport& f, const SchedulerShare* share, int cluster_gpus,
                  OutputFormat format, std::ostream& out, const RenderOptions& options) {
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
    case OutputFormat::kHtml:
      detail::render_fleet_html(f, share, cluster_gpus, options, out);
      return;
  }
  throw Error("mfu fleet writes text, markdown, json, csv, html or summary");
}

}  // namespace mfu
