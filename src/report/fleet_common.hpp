#pragma once
// What the fleet's text and HTML reports share: which jobs lost the most GPU time, which ran
// at the lowest MFU, and GPU time in hours.

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mfu/fleet.hpp"
#include "mfu/scheduler.hpp"

namespace mfu::detail {

[[nodiscard]] double gpu_hours_of(ExactCount gpu_ns);

/// A breakdown's rows (key, GPU time), the most GPU time first.
[[nodiscard]] std::vector<std::pair<std::string, ExactCount>> largest_first(
    const std::map<std::string, ExactCount>& by_key);

/// All the job's GPU time but its compute at peak (the "compute" bucket).
[[nodiscard]] double lost_gpu_hours(const JobSummary& s);

/// The analysed jobs, most GPU time lost first; at most `n`.
[[nodiscard]] std::vector<const FleetJob*> worst_jobs(const std::vector<FleetJob>& jobs,
                                                      std::size_t n);

/// The analysed jobs with a known MFU, lowest first; at most `n`.
[[nodiscard]] std::vector<const FleetJob*> lowest_mfu_jobs(const std::vector<FleetJob>& jobs,
                                                           std::size_t n);

/// The rows of the scheduler's share: what, GPU-hours (capacity down to the jobs analysed).
struct ShareRow {
  std::string what;
  double gpu_h;
};
[[nodiscard]] std::vector<ShareRow> share_rows(const SchedulerShare& s, const JobSummary& fleet);

void render_fleet_html(const FleetReport& f, const SchedulerShare* share, int cluster_gpus,
                       const RenderOptions& options, std::ostream& out);

}  // namespace mfu::detail
