// Stage 8b: a log plus a profiler trace of a few of its steps. The trace must be of this run
// (device, world size, step numbers and step times agree); then the time the log leaves
// unattributed is split in the proportions the trace measured on its steps: compute below
// peak, exposed communication, memory copies and data wait, host-bound idle and device idle.
// The log's own measurements (timers, checkpoints, restarts, startup) stay as measured.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "analysis/stages.hpp"
#include "mfu/error.hpp"
#include "mfu/units.hpp"

namespace mfu::detail {
namespace {

/// The trace's split of one step, as shares of what lies above the ideal compute time.
enum Share : std::size_t { kBelowPeak, kComm, kCopiesAndData, kHostIdle, kDeviceIdle, kShares };

constexpr std::array<B, kShares> kShareBucket{B::kInefficiency, B::kComm, B::kIo, B::kIdle,
                                              B::kIdle};
constexpr std::array<const char*, kShares> kShareName{"compute below peak", "exposed communication",
                                                      "memory copies and data wait",
                                                      "host-bound idle", "device idle"};

using Shares = std::array<double, kShares>;

/// The job's steps: for each step number, the slowest rank's (it sets the step time).
std::map<std::int64_t, TraceStep> job_steps(const TraceSummary& t, bool& cpu_only) {
  std::map<std::int64_t, TraceStep> steps;
  cpu_only = true;
  for (const auto& r : t.ranks) {
    cpu_only = cpu_only && r.cpu_only;
    for (const auto& s : r.steps) {
      auto [it, fresh] = steps.emplace(s.step, s);
      if (!fresh && s.wall_s > it->second.wall_s) it->second = s;
    }
  }
  return steps;
}

/// The seconds of one traced step above `ideal_fraction` of it, by share. A CPU-only trace
/// knows only the data loader's time: the rest of the step is the CPU computing.
Shares step_seconds(const TraceStep& s, double ideal_fraction, bool cpu_only) {
  Shares w{};
  const double ideal = ideal_fraction * s.wall_s;
  if (cpu_only) {
    w[kBelowPeak] = std::max(0.0, s.wall_s - s.idle_data_s - ideal);
    w[kCopiesAndData] = s.idle_data_s;
    return w;
  }
  w[kBelowPeak] = std::max(0.0, s.compute_s - ideal);
  w[kComm] = s.comm_exposed_s;
  w[kCopiesAndData] = s.memory_exposed_s + s.idle_data_s;
  w[kHostIdle] = std::max(0.0, s.idle_host_s - s.idle_data_s);
  w[kDeviceIdle] = std::max(0.0, s.idle_s - s.idle_host_s);
  return w;
}

double sum_of(const Shares& w) {
  double sum = 0;
  for (double v : w) sum += v;
  return sum;
}

[[noreturn]] void refuse(const std::string& why) {
  throw Error(fmt::format("the profiler trace is not of this run: {}", why),
              "give the trace of this job's own steps with its log, or analyze the trace on its "
              "own (mfu analyze TRACE)");
}

/// The log's step time at the traced steps (ProfilerStep#N is step N or N+1: PyTorch counts
/// from 0 and frameworks from 0 or 1): the offset whose times agree best.
double log_time_at(const Run& run, const Records& rec, const std::map<std::int64_t, TraceStep>& s,
                   double traced) {
  std::map<std::int64_t, double> by_step;
  for (std::size_t i = 0; i < rec.time.size(); ++i)
    if (std::isfinite(rec.time[i]) && run.iterations.step(i) >= 0)
      by_step[run.iterations.step(i)] = rec.time[i];
  double best = kUnknown;
  for (int offset : {0, 1}) {
    std::vector<double> t;
    for (const auto& [n, step] : s)
      if (auto it = by_step.find(n + offset); it != by_step.end()) t.push_back(it->second);
    const double m = median_of(t);
    if (std::isfinite(m) &&
        (!std::isfinite(best) || std::fabs(m / traced - 1) < std::fabs(best / traced - 1)))
      best = m;
  }
  return best;
}

// How far a traced step's median may be from the log's before the trace is refused as another
// run's. A judgement, not a published figure: the profiler slows the steps it records, by how
// much depends on what it records (shapes, stacks, memory), and a trace of another job or model
// is usually off by far more. Tests put a traced step 20% and 100% slower than the log's, on
// either side of it (test_log_trace_calibration).
constexpr double kStepTimeTolerance = 0.35;

void check_belongs(const Run& run, const Records& rec, const Steady& st, const Analysis& a,
                   const GpuDatabase& db, const std::map<std::int64_t, TraceStep>& steps) {
  const TraceSummary& t = *run.calibration;
  int world = -1;
  std::string device;
  for (const auto& r : t.ranks) {
    world = std::max(world, r.world_size);
    if (device.empty()) device = r.device_name;
  }
  if (world > 0 && known(a.gpus) && world != static_cast<int>(std::lround(a.gpus)))
    refuse(fmt::format("its world size is {} and the log's GPU count {}", world,
                       format_number(a.gpus)));
  if (known(a.gpus) && static_cast<double>(t.ranks.size()) > a.gpus)
    refuse(fmt::format("it holds {} ranks and the log ran on {}", t.ranks.size(),
                       count_of(a.gpus, "GPU")));
  if (!device.empty() && !a.gpu.empty()) {
    const GpuMatch m = db.try_resolve(device);
    if (m.spec && m.spec->id != a.gpu)
      refuse(fmt::format("it ran on {} ({}) and the log on {}", device, m.spec->id, a.gpu));
  }
  std::int64_t first = -1, last = -1;
  for (std::size_t i = 0; i < run.iterations.size(); ++i) {
    const std::int64_t s = run.iterations.step(i);
    if (s < 0) continue;
    first = first < 0 ? s : std::min(first, s);
    last = std::max(last, s);
  }
  const std::int64_t t0 = steps.begin()->first, t1 = steps.rbegin()->first;
  if (first >= 0 && (t1 + 1 < first || t0 > last + 1))
    refuse(fmt::format("its steps {}-{} are outside the log's steps {}-{}", t0, t1, first, last));
  std::vector<double> walls;
  for (const auto& [n, s] : steps) walls.push_back(s.wall_s);
  const double traced = median_of(walls);
  double logged = log_time_at(run, rec, steps, traced);
  if (!std::isfinite(logged)) logged = st.median;
  if (std::isfinite(logged) && std::fabs(traced / logged - 1) > kStepTimeTolerance)
    refuse(fmt::format("its steps take {} (median) and the log's {}: more than {:.0f}% apart",
                       format_duration(traced), format_duration(logged), kStepTimeTolerance * 100));
}

}  // namespace

void calibrate_from_trace(const Run& run, const Records& rec, const Steady& st,
                          const GpuDatabase& db, Totals& t, Analysis& a) {
  if (!run.calibration) return;
  bool cpu_only = false;
  const auto steps = job_steps(*run.calibration, cpu_only);
  if (steps.empty()) refuse("it has no ProfilerStep spans to compare with the log's steps");
  check_belongs(run, rec, st, a, db, steps);
  double split_sum = 0;
  for (double v : t.steady_split) split_sum += v;
  const double ideal_fraction =
      split_sum > 0 ? t.steady_split[static_cast<std::size_t>(B::kCompute)] / split_sum : 0;
  // Shares over all traced steps, weighted by their time; the spread over the full steps
  // (a step cut short at the end of the trace is in the sum, not the spread).
  std::vector<double> walls;
  for (const auto& [n, s] : steps) walls.push_back(s.wall_s);
  const double typical = median_of(walls);
  Shares total{}, lo, hi;
  lo.fill(1);
  hi.fill(0);
  for (const auto& [n, s] : steps) {
    const Shares w = step_seconds(s, ideal_fraction, cpu_only);
    const double sum = sum_of(w);
    for (std::size_t k = 0; k < kShares; ++k) total[k] += w[k];
    if (!(sum > 0) || s.wall_s < 0.5 * typical) continue;
    for (std::size_t k = 0; k < kShares; ++k) {
      lo[k] = std::min(lo[k], w[k] / sum);
      hi[k] = std::max(hi[k], w[k] / sum);
    }
  }
  const double above_ideal = sum_of(total);
  const std::string range =
      fmt::format("trace steps {}-{}", steps.begin()->first, steps.rbegin()->first);
  a.used.push_back({"calibration",
                    fmt::format("{} ({}, {})", range, count_of(double(steps.size()), "step"),
                                count_of(double(run.calibration->ranks.size()), "rank")),
                    fmt::format("{}", fmt::join(run.calibration_inputs, ", "))});
  if (!(above_ideal > 0)) {
    a.warnings.push_back(
        fmt::format("the profiler trace ({}) measures nothing above the ideal compute time: the "
                    "unattributed time stays unattributed",
                    range));
    return;
  }
  if (cpu_only)
    a.warnings.push_back(
        "the calibration trace is CPU-only (no device activity): its steps' time outside the data "
        "loader is taken as the CPU computing (compute below peak); communication and idle are "
        "not known from it");
  const double other = t.waterfall.seconds(B::kOther);
  const double other_steady = t.steady_split[static_cast<std::size_t>(B::kOther)];
  for (std::size_t k = 0; k < kShares; ++k) {
    const double share = total[k] / above_ideal;
    if (!(share > 0)) continue;
    t.waterfall.reassign(
        B::kOther, kShareBucket[k], other * share, BucketSource::kInferred,
        fmt::format("{} inferred from {} ({}, {}-{} over the traced steps)", kShareName[k], range,
                    format_percent(share), format_percent(lo[k], 0), format_percent(hi[k], 0)));
    t.steady_split[static_cast<std::size_t>(kShareBucket[k])] += other_steady * share;
  }
  t.steady_split[static_cast<std::size_t>(B::kOther)] = 0;
}

}  // namespace mfu::detail
