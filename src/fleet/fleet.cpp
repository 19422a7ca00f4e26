// Many jobs: the jobs under the paths, each analysed on its own on all cores and kept as its
// summary, labelled by a path pattern or a job table (fleet.hpp).
#include "mfu/fleet.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "fleet/job_labels.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "text.hpp"

namespace mfu {

std::vector<std::vector<std::string>> fleet_jobs(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
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

FleetReport analyze_fleet(const std::vector<std::string>& paths, const FleetOptions& options,
                          const GpuDatabase& db) {
  const detail::JobLabels labels(options.group_by, options.job_table);
  const auto jobs = fleet_jobs(paths);
  if (jobs.empty()) throw Error("no job under the paths given", "give log files or directories");
  FleetReport report;
  report.jobs.resize(jobs.size());
  std::atomic<std::size_t> next{0};
  AnalyzeOptions analysis = options.analysis;
  analysis.threads = 1;  // the jobs are the parallelism
  auto worker = [&] {
    IngestOptions io;
    io.threads = 1;
    for (std::size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      FleetJob& job = report.jobs[i];
      job.name = jobs[i].front();
      try {
        const Run run = ingest(jobs[i], io);
        JobSummary s = summarize_job(analyze(run, analysis, db), run);
        for (const auto& [key, value] : labels.of(job.name)) s.gpu_ns_by[key][value] = s.gpu_ns;
        job.summary = std::move(s);
      } catch (const Error& e) {
        job.error = e.what();
      } catch (const std::exception& e) {
        job.error = fmt::format("a bug in mfu: {}", e.what());
      }
    }
  };
  const unsigned n = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                                     static_cast<unsigned>(jobs.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < n; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  for (const auto& j : report.jobs)
    if (j.summary)
      report.total = report.total ? merge_summaries(*report.total, *j.summary) : *j.summary;
  return report;
}

void merge_summary_lines(std::string_view text, const std::string& origin,
                         std::optional<JobSummary>& total) {
  std::size_t n = 0;
  for (std::string_view line : detail::split(text, '\n')) {
    ++n;
    if (detail::trim(line).empty()) continue;
    const JobSummary s = parse_summary(line, fmt::format("{}:{}", origin, n));
    total = total ? merge_summaries(*total, s) : s;
  }
}

}  // namespace mfu
