#pragma once
/// Many jobs at once (`mfu fleet`): every job under some paths analysed on its own, in
/// parallel, and kept only as its summary (bounded memory), with labels from a path pattern or
/// a job table; the summaries add up exactly (summary.hpp).
///
/// **Example**:
///   mfu::FleetOptions o;
///   o.group_by = "runs/{team}/{job}/";
///   mfu::FleetReport f = mfu::analyze_fleet({"runs/vision", "runs/nlp"}, o);
///   f.total->mfu();

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/analysis.hpp"
#include "mfu/gpu.hpp"
#include "mfu/summary.hpp"

namespace mfu {

struct FleetOptions {
  AnalyzeOptions analysis;  ///< applied to every job
  /// A path pattern whose {keys} label the jobs ("runs/{team}/{job}/"); "" for none.
  std::string group_by;
  /// A job table (CSV: the job's name first, then one column per key); "" for none.
  std::string job_table;
};

struct FleetJob {
  std::string name;  ///< its first input
  std::optional<JobSummary> summary;
  std::string error;  ///< why it could not be analysed, when not
};

struct FleetReport {
  std::vector<FleetJob> jobs;       ///< in path order
  std::optional<JobSummary> total;  ///< of the jobs analysed; none when none was
};

/// The jobs under the paths: a file is a job; in a directory each file is a job and each
/// sub-directory one job (its rank logs or pieces, read together as analyze reads them).
[[nodiscard]] std::vector<std::vector<std::string>> fleet_jobs(
    const std::vector<std::string>& paths);

/// Analyses every job on all cores. Throws mfu::Error when no job is under the paths, or the
/// pattern or table is malformed; a job that cannot be analysed is listed with its reason.
[[nodiscard]] FleetReport analyze_fleet(const std::vector<std::string>& paths,
                                        const FleetOptions& options,
                                        const GpuDatabase& db = GpuDatabase::builtin());

/// Adds the summary lines of `text` (blank lines skipped) to `total`. Throws mfu::Error naming
/// `origin` and the line of one that is not a summary.
void merge_summary_lines(std::string_view text, const std::string& origin,
                         std::optional<JobSummary>& total);

}  // namespace mfu
