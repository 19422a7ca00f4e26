#pragma once
/// `mfu whatif`: what a change is worth. Three tools:
///  - project(): scale the buckets of an analyzed run (communication halved, data wait removed,
///    another accelerator, more GPUs at the same global batch) and recompute step time and MFU;
///  - estimate_step(): a step-time breakdown from analytical models when there is no log;
///  - replay_cluster(): scheduling fragmentation of a job trace under two placements.
///
/// **Example** (the classic worked example):
///   mfu::Scenario s;
///   s.scale["comm"] = 0.5;
///   mfu::Projection p = mfu::project(analysis, s);   // 330 ms -> 290 ms, MFU 34.0% -> 38.7%

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mfu/analysis.hpp"
#include "mfu/gpu.hpp"
#include "mfu/model.hpp"

namespace mfu {

// ---- Analytical models (each cited where it is defined) ---------------------------------

/// Ring all-reduce of `bytes` over `n` ranks at bus bandwidth `bw` (bytes/s):
/// t = 2(n-1)/n * bytes / bw (NVIDIA nccl-tests doc/PERFORMANCE.md).
[[nodiscard]] double ring_allreduce_s(double bytes, double n, double bw);
/// All-gather or reduce-scatter: t = (n-1)/n * bytes / bw, bytes = the whole gathered array.
[[nodiscard]] double ring_allgather_s(double bytes, double n, double bw);
/// Pipeline bubble as a share of the step: (p-1)/(m+p-1) (GPipe, Huang et al. 2019; Narayanan
/// et al. 2021 Sec. 2.2); interleaved with v chunks per stage: (p-1)/(v*m + p-1), i.e. a bubble
/// of (p-1)/(v*m) of the ideal time.
[[nodiscard]] double pipeline_bubble_fraction(double p, double m, double v = 1);
/// Young (1974) optimal checkpoint interval to first order: sqrt(2 * delta * MTBF).
[[nodiscard]] double young_interval_s(double checkpoint_s, double mtbf_s);
/// Daly (2006, eq. 37) higher-order optimum: sqrt(2dM)(1 + sqrt(d/2M)/3 + d/18M) - d, or M when
/// d >= 2M. What `mfu whatif` recommends.
[[nodiscard]] double daly_interval_s(double checkpoint_s, double mtbf_s);
/// Expected share of wall time lost to checkpoints and failures with interval tau:
/// delta/tau + (tau/2 + restart)/MTBF (first-order; wasted work is half an interval on average).
[[nodiscard]] double checkpoint_loss_fraction(double interval_s, double checkpoint_s, double mtbf_s,
                                              double restart_s);

// ---- Projection of a measured run ---------------------------------------------------------

struct Scenario {
  std::map<std::string, double> scale;  ///< bucket name -> multiplier (0 removes it)
  std::optional<double> stalls;         ///< multiplier of the stall excess (0 removes stalls)
  std::optional<double> overlap;        ///< share of communication hidden under compute, 0..1
  const GpuSpec* gpu = nullptr;         ///< another accelerator (dense peak in the run's dtype)
  std::optional<double> peak;  ///< another dense peak per GPU (FLOP/s), with or without gpu
  std::optional<double> gpus;  ///< another GPU count (absolute) at the same global batch
  std::optional<double> train_tokens;
  std::optional<double> price_per_gpu_hour;
};

struct ProjectedNumbers {
  double step_time_s = kUnknown;       ///< the mean steady step, stalls left out
  std::optional<double> mfu;           ///< of that step
  std::optional<double> mfu_run;       ///< of the whole run (wall time)
  std::optional<double> tokens_per_s;  ///< steady, global
  double wall_time_s = 0;              ///< of the run as logged
  double gpus = kUnknown;
  double peak_flops_per_gpu = kUnknown;
  std::string gpu;                     ///< accelerator id, empty when only a peak is known
  std::optional<double> train_time_s;  ///< for Scenario::train_tokens, at the run's overall pace
  std::optional<double> gpu_hours;     ///< of the training (train_tokens) or of the run
  std::optional<double> cost;
  std::map<std::string, double> step;  ///< seconds per steady step, by bucket
  std::map<std::string, double> run;   ///< seconds over the run, by bucket
};

struct Projection {
  ProjectedNumbers measured;
  ProjectedNumbers projected;
  std::vector<std::string> explanations;  ///< one line per change
  std::vector<std::string> notes;
};

/// Applies `scenario` to `analysis`. Throws mfu::Error for a scenario that cannot apply (a GPU
/// change without a known peak, a bucket name that does not exist).
[[nodiscard]] Projection project(const Analysis& analysis, const Scenario& scenario,
                                 const GpuDatabase& db = GpuDatabase::builtin());

// ---- Analytical estimate without a log --------------------------------------------------------

struct EstimateInputs {
  ModelShape model;
  Convention convention = Convention::kPalm;
  Recompute recompute = Recompute::kNone;
  const GpuSpec* gpu = nullptr;
  std::optional<double> peak;  ///< overrides the accelerator's dense peak
  double gpus = 0;
  double gpus_per_node = 8;  ///< HGX/DGX and MI300X platforms put 8 GPUs in a node
  double tp = 1, pp = 1, cp = 1;
  double vpp = 1;           ///< interleaved chunks per pipeline stage
  double micro_batch = 1;   ///< sequences per micro-batch
  double global_batch = 0;  ///< sequences per step
  /// Achieved share of the dense peak in compute kernels: an assumption, printed as one. Large
  /// bf16 GEMMs measure at roughly 70-90% of the datasheet peak on A100/H100 in cuBLAS
  /// benchmarks; whole layers (attention, norms) and small models get less.
  double kernel_efficiency = 0.7;
  double overlap = 0;           ///< share of data-parallel communication hidden
  double grad_bytes = 2;        ///< bytes per gradient element (bf16)
  double grad_compression = 1;  ///< the gradient volume is divided by this
  /// Bytes/s per GPU and direction (default: the accelerator's link / 2, since datasheets give
  /// NVLink/Infinity Fabric bandwidth as both directions together, e.g. H100 900 GB/s).
  std::optional<double> intra_node_bw;
  double inter_node_bw = 50e9;         ///< bytes/s per GPU (400 Gb/s NIC per GPU)
  std::optional<double> checkpoint_s;  ///< blocking save time
  std::optional<double> mtbf_s;        ///< job mean time between failures
  double restart_s = 600;  ///< assumed: reschedule, start-up and checkpoint load (10 min)
};

struct StepEstimate {
  double step_time_s = 0;
  double compute_s = 0;  ///< model + recompute FLOPs at the assumed kernel efficiency
  double ideal_s = 0;    ///< model FLOPs at peak
  double tp_comm_s = 0;
  double dp_comm_s = 0;  ///< all of it
  double dp_exposed_s = 0;
  double bubble_s = 0;
  double mfu = 0;
  double tokens_per_s = 0;
  double dp = 0;
  double micro_batches = 0;
  std::optional<double> checkpoint_interval_s;
  std::optional<double> failure_loss_fraction;
  std::vector<std::string> lines;  ///< the formula behind each component
};

/// Throws mfu::Error naming the flag that is missing or inconsistent.
[[nodiscard]] StepEstimate estimate_step(const EstimateInputs& in);
/// Empty when the parallel layout divides evenly (GPUs by tp x pp x cp, the global batch by
/// micro-batch x data-parallel size), else what does not.
[[nodiscard]] std::string estimate_layout_problem(const EstimateInputs& in);

/// The estimate at other GPU counts with the same global batch (data-parallel scaling): one
/// point per factor whose layout divides evenly.
struct ScalingPoint {
  double gpus = 0;
  StepEstimate estimate;
};
[[nodiscard]] std::vector<ScalingPoint> scaling_at_fixed_batch(const EstimateInputs& in,
                                                               const std::vector<double>& factors);

// ---- Cluster fragmentation ------------------------------------------------------------------

struct Job {
  std::string name;
  double submit_s = 0;
  int gpus = 1;
  double duration_s = 0;
  double start_s = kUnknown;  ///< when it ran, where the trace says (start_time); else unknown
  std::string state;          ///< as the trace prints it (COMPLETED, FAILED, ...); "" if none
};

struct JobTrace {
  std::vector<Job> jobs;          ///< in submission order, times relative to the first submission
  std::size_t zero_gpu_jobs = 0;  ///< CPU-only rows, left out
  std::size_t rows = 0;
};

/// Reads a job trace CSV with a header: submit_s, gpus, duration_s, other columns ignored but
/// start_time (or start_s) and state (or status), kept where present.
/// Also accepted, for the public traces: submit_time/submitted_time (seconds or
/// "YYYY-MM-DD HH:MM:SS"), gpu_num/num_gpus/gpu_count, duration/run_time, or start_time and
/// end_time instead of a duration (SenseTime Helios, Shanghai AI Lab AcmeTrace). Plain, gzip or
/// zstd. Throws mfu::Error naming the file and line of a bad row.
[[nodiscard]] JobTrace load_jobs(const std::string& path);
[[nodiscard]] JobTrace parse_jobs(std::string_view csv_text, const std::string& origin);

enum class Placement { kSpread, kPack };

struct ClusterResult {
  Placement placement = Placement::kSpread;
  double makespan_s = 0;  ///< from the first submission to the last finish
  double mean_wait_s = 0;
  double max_wait_s = 0;
  double utilization = 0;  ///< busy GPU-time / (GPUs x makespan)
  double fragmentation_idle_gpu_h =
      0;  ///< GPU-hours free while a waiting job fit the cluster's total
  std::size_t fragmentation_blocked_jobs =
      0;                          ///< jobs that waited while they fit the total free GPUs
  std::size_t jobs = 0;           ///< jobs replayed
  std::size_t unschedulable = 0;  ///< jobs larger than the cluster, left out
  std::vector<double> start_s;    ///< per input job, when it started (NaN: left out)
};

/// Both placements of one trace, for reports.
struct ClusterReport {
  int nodes = 0;
  int gpus_per_node = 0;
  std::string origin;
  std::size_t rows = 0;
  std::size_t zero_gpu_jobs = 0;
  ClusterResult spread, pack;
};

/// Replays the jobs in arrival order (first come, first served) on `nodes` x `gpus_per_node`.
/// A job of at most one node's GPUs runs inside one node; a larger one takes whole free nodes.
[[nodiscard]] ClusterResult replay_cluster(const std::vector<Job>& jobs, int nodes,
                                           int gpus_per_node, Placement placement);

}  // namespace mfu
