// Projection of an analyzed run under a scenario: every change is a multiplier on waterfall
// buckets, applied to the mean steady step and to the whole run alike (stall removal touches
// only the run). MFU is the share of the time that is compute at peak, so it follows directly.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
#include "mfu/units.hpp"
#include "mfu/whatif.hpp"

namespace mfu {
namespace {

using Split = std::map<std::string, double>;

double sum(const Split& s) {
  double t = 0;
  for (const auto& [k, v] : s) t += v;
  return t;
}

double get(const Split& s, const std::string& k) {
  auto it = s.find(k);
  return it == s.end() ? 0.0 : it->second;
}

std::string label_of(const Analysis& a, const std::string& name) {
  const Bucket* b = a.bucket(name);
  return b ? b->label : name;
}

bool is_bucket(const std::string& name) {
  return bucket_from_key(name).has_value();
}

/// The working state: per-step and whole-run seconds by bucket.
struct State {
  Split step, run;
  void scale(const std::string& b, double k) {
    if (step.count(b)) step[b] *= k;
    if (run.count(b)) run[b] *= k;
  }
};

std::string change_line(const Analysis& a, const std::string& what, const std::string& bucket,
                        double before, double after, double run_before, double run_after) {
  return fmt::format("{}: {} {} -> {} per step ({}{}), {} over the run", what, label_of(a, bucket),
                     format_duration(before), format_duration(after), after < before ? "-" : "+",
                     format_duration(std::fabs(after - before)),
                     fmt::format("{}{}", run_after < run_before ? "-" : "+",
                                 format_duration(std::fabs(run_after - run_before))));
}

void fill_numbers(const Analysis& a, const State& st, double gpus, double peak,
                  const std::string& gpu, bool mfu_known, const Scenario& sc,
                  ProjectedNumbers& out) {
  out.step = st.step;
  out.run = st.run;
  out.step_time_s = sum(st.step);
  out.wall_time_s = sum(st.run);
  out.gpus = gpus;
  out.peak_flops_per_gpu = peak;
  out.gpu = gpu;
  // The compute bucket is the model FLOPs at peak, so MFU is its share of the time.
  if (mfu_known && out.step_time_s > 0) out.mfu = get(st.step, "compute") / out.step_time_s;
  if (mfu_known && out.wall_time_s > 0) out.mfu_run = get(st.run, "compute") / out.wall_time_s;
  // Tokens per steady iteration, from analyze's steady throughput and mean steady step (the
  // same "steady": records after warm-up, stalls included).
  const double measured_step = sum(a.steady_step_split_s);
  const double tokens_per_step =
      a.tokens_per_s && measured_step > 0 ? *a.tokens_per_s * measured_step : kUnknown;
  if (known(tokens_per_step) && out.step_time_s > 0)
    out.tokens_per_s = tokens_per_step / out.step_time_s;
  if (sc.train_tokens && out.tokens_per_s) {
    // The steady pace over the whole budget, plus the run's one-off set-up once (it does not
    // grow with the tokens). Checkpoints and evaluations between steps are not in the pace.
    out.train_time_s = get(st.run, "startup") + *sc.train_tokens / *out.tokens_per_s;
  }
  if (known(gpus))
    out.gpu_hours = (out.train_time_s ? *out.train_time_s : out.wall_time_s) * gpus / 3600.0;
  if (out.gpu_hours && sc.price_per_gpu_hour) out.cost = *out.gpu_hours * *sc.price_per_gpu_hour;
}

}  // namespace

Projection project(const Analysis& a, const Scenario& sc, const GpuDatabase& db) {
  if (a.steady_step_split_s.empty() || !(a.steady_step_count > 0))
    throw Error("the run has no steady-state step to project (all records are warm-up or untimed)",
                "check that the log has timed iterations past the warm-up");
  Projection p;
  State st;
  st.step = a.steady_step_split_s;
  for (const auto& b : a.buckets)
    if (b.seconds > 0) st.run[b.name] = b.seconds;
  const bool mfu_known = a.mfu.has_value();
  double gpus = a.gpus, peak = a.peak_flops_per_gpu;
  std::string gpu = a.gpu;
  fill_numbers(a, st, gpus, peak, gpu, mfu_known, sc, p.measured);

  // 1. Buckets scaled or removed.
  for (const auto& [name, k] : sc.scale) {
    if (!is_bucket(name))
      throw Error(fmt::format("'{}' is not a bucket of the waterfall", name),
                  "use one of comm, io, idle, checkpoint, restart, startup, eval, other, "
                  "compute_inefficiency");
    if (name == "compute")
      throw Error("compute at peak is the model's own work and cannot be scaled",
                  fmt::format("give {} or {} for faster hardware, or scale compute_inefficiency",
                              input_phrase(Input::kToGpu), input_phrase(Input::kToPeak)));
    if (!(k >= 0) || !std::isfinite(k))
      throw Error(fmt::format("the scale of {} must be a number >= 0", name));
    const double b0 = get(st.step, name), r0 = get(st.run, name);
    st.scale(name, k);
    p.explanations.push_back(change_line(a, fmt::format("{} x{}", name, format_number(k, 3)), name,
                                         b0, get(st.step, name), r0, get(st.run, name)));
  }

  // 2. Another accelerator: compute scales with the dense peak (the same share of it achieved),
  //    communication with the accelerator's interconnect bandwidth.
  if (sc.gpu || sc.peak) {
    double new_peak = kUnknown;
    std::string new_gpu = sc.gpu ? sc.gpu->id : std::string();
    if (sc.peak) {
      new_peak = *sc.peak;
    } else {
      const Dtype dt = a.dtype.empty() ? Dtype::kBf16 : parse_dtype(a.dtype);
      const auto pk = sc.gpu->dense_peak(dt);
      if (!pk)
        throw Error(fmt::format("{} has no published dense {} peak", sc.gpu->name, to_string(dt)),
                    fmt::format("give {} with the FLOP/s per GPU", input_phrase(Input::kToPeak)));
      new_peak = *pk;
    }
    if (!known(peak))
      throw Error(
          "the run's peak FLOP/s is unknown, so another accelerator cannot be compared with it",
          fmt::format("give {} or {} for the hardware the log ran on", input_phrase(Input::kGpu),
                      input_phrase(Input::kPeak)));
    if (!(new_peak > 0)) throw Error("the new peak must be positive");
    const double k = peak / new_peak;
    const double c0 = get(st.step, "compute") + get(st.step, "compute_inefficiency");
    st.scale("compute", k);
    st.scale("compute_inefficiency", k);
    p.explanations.push_back(fmt::format(
        "accelerator {} -> {} ({} -> {} dense): compute {} -> {} per step, assuming the same share "
        "of the peak",
        gpu.empty() ? "given" : gpu, new_gpu.empty() ? "given" : new_gpu, format_flop_rate(peak),
        format_flop_rate(new_peak), format_duration(c0),
        format_duration(get(st.step, "compute") + get(st.step, "compute_inefficiency"))));
    const GpuSpec* old_spec = gpu.empty() ? nullptr : db.try_resolve(gpu).spec;
    if (sc.gpu && old_spec && old_spec->interconnect_bandwidth > 0 &&
        sc.gpu->interconnect_bandwidth > 0 && get(st.step, "comm") > 0) {
      const double kc = old_spec->interconnect_bandwidth / sc.gpu->interconnect_bandwidth;
      const double m0 = get(st.step, "comm");
      st.scale("comm", kc);
      p.explanations.push_back(fmt::format(
          "interconnect {} {} -> {} {}: exposed communication {} -> {} per step (all of it assumed "
          "on that link)",
          old_spec->interconnect,
          format_number(old_spec->interconnect_bandwidth / 1e9, 4) + " GB/s", sc.gpu->interconnect,
          format_number(sc.gpu->interconnect_bandwidth / 1e9, 4) + " GB/s", format_duration(m0),
          format_duration(get(st.step, "comm"))));
    } else if (get(st.step, "comm") > 0) {
      p.notes.push_back(
          "communication is kept as measured: the interconnect of one of the accelerators is "
          "unknown");
    }
    peak = new_peak;
    gpu = new_gpu;
  }

  // 3. Another GPU count at the same global batch: each GPU gets 1/f of the work and data; the
  //    data-parallel gradient all-reduce keeps its per-GPU volume and grows by the ring factor
  //    2(n-1)/n (nccl-tests PERFORMANCE.md); bubbles and other per-step waits stay as they are.
  if (sc.gpus) {
    if (!known(gpus) || !(gpus > 0))
      throw Error("the run's GPU count is unknown, so it cannot be changed",
                  fmt::format("give {} with the job's GPU count", input_phrase(Input::kGpus)));
    const double g2 = *sc.gpus;
    if (!(g2 >= 1) || !std::isfinite(g2)) throw Error("the new GPU count must be at least 1");
    const double f = g2 / gpus;
    const double s0 = sum(st.step);
    for (const char* b : {"compute", "compute_inefficiency", "io"}) st.scale(b, 1.0 / f);
    const double ring = gpus > 1 && g2 > 1 ? ((g2 - 1) / g2) / ((gpus - 1) / gpus) : 1.0;
    if (gpus > 1 && g2 > 1) st.scale("comm", ring);
    p.explanations.push_back(
        fmt::format("GPUs {} -> {} at the same global batch: compute and data per GPU x{}, "
                    "gradient all-reduce x{} "
                    "(ring 2(n-1)/n); step {} -> {}",
                    format_number(gpus, 6), format_number(g2, 6), format_number(1.0 / f, 3),
                    format_number(ring, 4), format_duration(s0), format_duration(sum(st.step))));
    if (gpus == 1 || g2 == 1)
      p.notes.push_back(
          "one of the GPU counts is 1: the communication of the other cannot be derived and is "
          "kept");
    if (get(st.step, "idle") > 0)
      p.notes.push_back(
          "the pipeline bubble and idle time are kept per step; with more replicas at a fixed "
          "global "
          "batch each pipeline gets fewer micro-batches and the bubble grows (see the analytical "
          "mode)");
    gpus = g2;
  }

  // 4. More overlap: that share of the exposed communication hides under compute (at most all of
  // it).
  if (sc.overlap) {
    const double o = *sc.overlap;
    if (!(o >= 0 && o <= 1))
      throw Error(
          fmt::format("{} must be a share between 0% and 100%", input_phrase(Input::kOverlap)));
    const double comm = get(st.step, "comm");
    const double room = get(st.step, "compute") + get(st.step, "compute_inefficiency");
    const double hidden = std::min(o * comm, room);
    if (comm > 0) {
      const double k = (comm - hidden) / comm;
      const double r0 = get(st.run, "comm");
      st.scale("comm", k);
      p.explanations.push_back(change_line(a, fmt::format("overlap {}", format_percent(o, 0)),
                                           "comm", comm, get(st.step, "comm"), r0,
                                           get(st.run, "comm")));
      if (hidden < o * comm)
        p.notes.push_back("the overlap is capped by the compute time it can hide under");
    } else {
      p.notes.push_back(
          fmt::format("{} has nothing to act on: the run shows no exposed communication",
                      input_phrase(Input::kOverlap)));
    }
  }

  // 5. Stalls: their excess over the steady step, where the analysis placed it.
  if (sc.stalls) {
    const double k = *sc.stalls;
    if (!(k >= 0) || !std::isfinite(k)) throw Error("the stall scale must be a number >= 0");
    double removed = 0, removed_step = 0;
    for (const auto& [b, ex] : a.stalls.excess_by_bucket) {
      const double cut = std::min(get(st.run, b), (1.0 - k) * ex);
      if (st.run.count(b)) st.run[b] -= cut;
      removed += cut;
      // The mean steady step holds the stalls' excess too (analyze's steady state).
      const double step_cut = std::min(get(st.step, b), cut / a.steady_step_count);
      if (st.step.count(b)) st.step[b] -= step_cut;
      removed_step += step_cut;
    }
    p.explanations.push_back(fmt::format(
        "stalls x{}: {} stalled records, -{} per step, -{} over the run", format_number(k, 3),
        a.stalls.count, format_duration(removed_step), format_duration(removed)));
  }

  fill_numbers(a, st, gpus, peak, gpu, mfu_known, sc, p.projected);
  if (p.projected.mfu && *p.projected.mfu > 1.0 + 1e-9)
    throw ImpossibleResult(
        fmt::format("the projected MFU would be {}: the scenario removes more time than the "
                    "step has outside compute at peak",
                    format_percent(*p.projected.mfu)));
  if (!mfu_known)
    p.notes.push_back("MFU is not projected: the run's model FLOPs or peak are unknown");
  if (p.explanations.empty())
    p.notes.push_back("no change given: the projection equals the measurement");
  return p;
}

}  // namespace mfu
