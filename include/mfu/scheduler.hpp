#pragma once
/// The scheduler's share of a cluster's GPU time, from Slurm's accounting: what no job held
/// while jobs waited, what no job held with none waiting, and what failed, cancelled and
/// timed-out jobs held. With a fleet report it completes one waterfall from the cluster's
/// capacity down to model math.
///
/// **Example**:
///   // sacct --parsable2 --allusers --starttime ... --format=JobID,JobName,Submit,Start,
///   //   End,AllocTRES,NNodes,State > jobs.txt
///   mfu::SlurmAccounting acct = mfu::load_sacct("jobs.txt");
///   mfu::SchedulerShare s = mfu::scheduler_share(acct, 512);   // a 512-GPU cluster

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/run.hpp"

namespace mfu {

/// One allocation (job steps, "123.batch", are folded into their job).
struct SlurmJob {
  std::string id, name, state;  ///< state as sacct prints it, without "by UID" ("CANCELLED")
  double submit_s = kUnknown, start_s = kUnknown, end_s = kUnknown;  ///< Unix seconds (UTC)
  int gpus = 0;   ///< from AllocTRES: gres/gpu=N (or the sum of the typed gres/gpu:TYPE=N)
  int nodes = 0;  ///< NNodes
};

struct SlurmAccounting {
  std::vector<SlurmJob> jobs;
  std::string source = "Slurm accounting";  ///< what the jobs' times come from, for reports
  std::size_t step_lines = 0;               ///< "123.batch", "123.0" lines, folded into their job
  std::size_t rows = 0;
};

/// Reads `sacct --parsable2` output (a header naming the columns, '|' between fields; any
/// order, unknown columns ignored): JobID, and what is there of JobName, Submit, Start, End
/// (sacct's "YYYY-MM-DDTHH:MM:SS", read as UTC; "Unknown" and "None" are unknown), AllocTRES,
/// NNodes, State. Throws mfu::Error naming the file and line of a bad row.
[[nodiscard]] SlurmAccounting parse_sacct(std::string_view text, const std::string& origin);
[[nodiscard]] SlurmAccounting load_sacct(const std::string& path);

struct JobTrace;

/// The jobs of a job trace (the CSV `whatif cluster` reads) as an accounting of a cluster of
/// `cluster_gpus`: where every job that ran says when (start_time), those times; otherwise the
/// start times of a first-come-first-served replay on the cluster's GPUs as one pool (no node
/// boundaries), which `source` says. States where the trace has them (Helios, AcmeTrace).
[[nodiscard]] SlurmAccounting accounting_from_jobs(const JobTrace& trace, int cluster_gpus);

/// A job state that threw its GPU time away: FAILED, CANCELLED, TIMEOUT, NODE_FAIL,
/// OUT_OF_MEMORY, PREEMPTED, BOOT_FAIL, DEADLINE.
[[nodiscard]] bool wasted_state(std::string_view state);

struct SchedulerShare {
  double span_s = 0;              ///< from the first submit or start to the last end
  double capacity_gpu_h = 0;      ///< cluster GPUs x span
  double allocated_gpu_h = 0;     ///< held by jobs
  double wasted_gpu_h = 0;        ///< of that, by jobs that failed, were cancelled or timed out
  double idle_waiting_gpu_h = 0;  ///< held by nobody while a job waited that would have fit
  double idle_gpu_h = 0;          ///< held by nobody otherwise
  std::size_t jobs = 0, wasted_jobs = 0, gpu_jobs = 0;
  std::string source;  ///< the accounting's
};

/// Sweeps the jobs' start and end times over a cluster of `cluster_gpus`. "Would have fit": a
/// job waited (submitted, not started) needing no more GPUs than were free in total, the
/// fragmentation of Weng et al., "Beware of Fragmentation" (USENIX ATC 2023). Throws
/// mfu::Error when the jobs hold more GPUs at once than the cluster has.
[[nodiscard]] SchedulerShare scheduler_share(const SlurmAccounting& accounting, int cluster_gpus);

}  // namespace mfu
