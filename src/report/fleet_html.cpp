// `mfu fleet --output html`: one self-contained page (no network, no scripts) with what the
// text report says: the cluster's capacity down to the jobs (with an accounting), the fleet's
// MFU and where its GPU time went, the same GPU time by accelerator, model, framework and any
// grouping, the worst jobs, and the jobs that could not be analysed.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "mfu/report.hpp"
#include "mfu/units.hpp"
#include "report/fleet_common.hpp"
#include "report/html_parts.hpp"
#include "report/markup.hpp"

namespace mfu::detail {
namespace {

/// A bar of `share` (0..1) of 160 px, drawn in SVG so that it prints.
std::string share_bar(double share) {
  const double w = 160 * std::clamp(std::isfinite(share) ? share : 0.0, 0.0, 1.0);
  return fmt::format(
      "<td><svg width=\"160\" height=\"10\" role=\"img\" aria-label=\"{}\"><rect class=\"bar\" "
      "width=\"{:.1f}\" height=\"10\"/></svg></td>",
      format_percent(share), w);
}

std::string mfu_text(const JobSummary& s) {
  return std::isfinite(s.mfu()) ? format_percent(s.mfu()) : std::string("unknown");
}

double share_of(ExactCount part, ExactCount whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

void headline_and_summary(const JobSummary& s, std::ostream& out) {
  out << "<h1>"
      << escape_markup(fmt::format("{} on {}: MFU {}", count_of(double(s.jobs), "job"),
                                   format_gpu_time(s.gpu_hours()), mfu_text(s)))
      << "</h1>\n<table id=\"summary\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    out << "<tr><th>" << escape_markup(k) << "</th>" << cell(v) << "</tr>\n";
  };
  row("jobs", format_figure(static_cast<double>(s.jobs)));
  row("GPU time", format_gpu_time(s.gpu_hours()));
  row("MFU (model FLOPs over the peak FLOPs offered)", mfu_text(s));
  row("GPU time of jobs with a known MFU", format_percent(share_of(s.mfu_gpu_ns, s.gpu_ns)));
  row("steps", format_figure(static_cast<double>(s.steps)));
  row("restarts", format_figure(static_cast<double>(s.restarts)));
  row("tokens", format_count(static_cast<double>(s.tokens)));
  out << "</table>\n";
}

void scheduler_section(const SchedulerShare& sh, int cluster_gpus, const JobSummary& fleet,
                       std::ostream& out) {
  out << "<h2>The cluster</h2>\n<p>"
      << escape_markup(fmt::format("{} over {} = {} ({}, {} with GPUs).",
                                   count_of(cluster_gpus, "GPU"), format_duration(sh.span_s),
                                   format_gpu_time(sh.capacity_gpu_h), sh.source,
                                   count_of(double(sh.gpu_jobs), "job")))
      << "</p>\n<table id=\"cluster\"><tr><th>GPU time</th><th class=\"num\">GPU-hours</th>"
         "<th class=\"num\">share</th><th></th></tr>\n";
  for (const auto& r : share_rows(sh, fleet)) {
    const double share = sh.capacity_gpu_h > 0 ? r.gpu_h / sh.capacity_gpu_h : 0;
    out << "<tr>" << cell(r.what) << cell(format_gpu_time(r.gpu_h), true)
        << cell(format_percent(share), true) << share_bar(share) << "</tr>\n";
  }
  out << "</table>\n";
}

void bucket_section(const JobSummary& s, std::ostream& out) {
  out << "<h2>Where the GPU time went</h2>\n<table id=\"buckets\"><tr><th>bucket</th>"
         "<th class=\"num\">GPU time</th><th class=\"num\">share</th><th></th></tr>\n";
  for (std::size_t b = 0; b < kBucketCount; ++b) {
    const BucketInfo& info = bucket_info(static_cast<BucketId>(b));
    const auto it = s.bucket_gpu_ns.find(info.key);
    if (it == s.bucket_gpu_ns.end() || it->second == 0) continue;
    const double share = share_of(it->second, s.gpu_ns);
    out << "<tr>" << cell(info.label) << cell(format_gpu_time(gpu_hours_of(it->second)), true)
        << cell(format_percent(share), true) << share_bar(share) << "</tr>\n";
  }
  out << "</table>\n";
}

void breakdown(const std::string& title, const std::map<std::string, ExactCount>& m,
               ExactCount total, std::ostream& out) {
  if (m.empty()) return;
  out << "<h3>" << escape_markup(title) << "</h3>\n<table class=\"breakdown\">\n";
  for (const auto& [k, v] : largest_first(m)) {
    const double share = share_of(v, total);
    out << "<tr>" << cell(k) << cell(format_gpu_time(gpu_hours_of(v)), true)
        << cell(format_percent(share), true) << share_bar(share) << "</tr>\n";
  }
  out << "</table>\n";
}

void job_tables(const std::vector<FleetJob>& jobs, std::ostream& out) {
  const auto worst = worst_jobs(jobs, 20);
  if (!worst.empty()) {
    out << "<h2>Worst jobs by GPU time lost</h2>\n<p class=\"small\">All of a job's GPU time but "
           "its compute at peak.</p>\n<div class=\"wide\"><table id=\"worst\"><tr><th>job</th>"
           "<th class=\"num\">lost</th><th class=\"num\">GPU time</th><th class=\"num\">MFU</th>"
           "</tr>\n";
    for (const FleetJob* j : worst)
      out << "<tr>" << cell(j->name) << cell(format_gpu_time(lost_gpu_hours(*j->summary)), true)
          << cell(format_gpu_time(j->summary->gpu_hours()), true)
          << cell(mfu_text(*j->summary), true) << "</tr>\n";
    out << "</table></div>\n";
  }
  const auto lowest = lowest_mfu_jobs(jobs, 20);
  if (!lowest.empty()) {
    out << "<h2>Lowest MFU</h2>\n<div class=\"wide\"><table id=\"lowest\"><tr><th>job</th>"
           "<th class=\"num\">MFU</th><th class=\"num\">GPU time</th></tr>\n";
    for (const FleetJob* j : lowest)
      out << "<tr>" << cell(j->name) << cell(mfu_text(*j->summary), true)
          << cell(format_gpu_time(j->summary->gpu_hours()), true) << "</tr>\n";
    out << "</table></div>\n";
  }
  bool header = false;
  for (const auto& j : jobs) {
    if (j.summary) continue;
    if (!header)
      out << "<h2>Jobs that could not be analysed</h2>\n<table id=\"failed\"><tr><th>job</th>"
             "<th>why</th></tr>\n";
    header = true;
    out << "<tr>" << cell(j.name) << cell(j.error) << "</tr>\n";
  }
  if (header) out << "</table>\n";
}

}  // namespace

void render_fleet_html(const FleetReport& f, const SchedulerShare* share, int cluster_gpus,
                       const RenderOptions& options, std::ostream& out) {
  const JobSummary& s = *f.total;
  html_open("mfu fleet report", out);
  headline_and_summary(s, out);
  if (share) scheduler_section(*share, cluster_gpus, s, out);
  bucket_section(s, out);
  breakdown("by accelerator", s.gpu_ns_by_gpu, s.gpu_ns, out);
  breakdown("by model", s.gpu_ns_by_model, s.gpu_ns, out);
  breakdown("by framework", s.gpu_ns_by_framework, s.gpu_ns, out);
  for (const auto& [key, m] : s.gpu_ns_by) breakdown("by " + key, m, s.gpu_ns, out);
  job_tables(f.jobs, out);
  html_close(options, out);
}

}  // namespace mfu::detail
