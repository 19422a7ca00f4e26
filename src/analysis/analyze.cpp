// mfu::analyze: runs the stages of stages.hpp in order and checks the result against the
// wall time measured apart from the attribution.
#include <fmt/format.h>

#include <cmath>

#include "analysis/parallel.hpp"
#include "analysis/select.hpp"
#include "analysis/stages.hpp"
#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
#include "mfu/units.hpp"

namespace mfu {

double iteration_tokens(const Analysis& a, const Iteration& it) {
  return detail::work_plan_of(a).tokens(detail::validated(it));
}

double iteration_model_flops(const Analysis& a, const Iteration& raw) {
  const Iteration it = detail::validated(raw);
  return detail::work_plan_of(a).flops(it, it.time_s);
}

double iteration_mfu(const Analysis& a, const Iteration& raw) {
  const Iteration it = detail::validated(raw);
  const double f = iteration_model_flops(a, it);
  const double G = a.per_gpu ? 1.0 : a.gpus;
  if (!known(f) || !known(it.time_s) || !known(a.peak_flops_per_gpu) || !known(G)) return kUnknown;
  return f / (a.peak_flops_per_gpu * G * it.time_s);
}

Analysis detail::resolved_analysis(const Run& run, const Resolved& r) {
  Analysis a;
  a.format = run.format;
  a.inputs = run.inputs;
  a.used = r.used;
  a.unknowns = r.unknowns;
  a.warnings = r.warnings;
  a.gpu_count_conflict = r.gpu_count_conflict;
  if (r.spec) {
    a.gpu = r.spec->id;
    a.gpu_name = r.spec->name;
    a.tdp_w = r.spec->tdp_w;
  }
  a.dtype = r.dtype;
  a.peak_flops_per_gpu = r.peak;
  a.gpus = r.gpus;
  a.per_gpu = r.per_gpu;
  a.record_tokens_scale = r.tokens_scale;
  a.convention = to_string(r.convention);
  a.recompute = to_string(r.recompute);
  a.seq_len = r.seq_len;
  a.default_tokens_per_iteration = r.tokens_default;
  a.default_flops_per_iteration = r.flops_default;
  if (r.fpt) {
    a.model_flops_per_token = r.fpt->model;
    a.hardware_flops_per_token = r.fpt->hardware;
  }
  const bool bubble_known = known(r.micro_batches) && r.micro_batches >= 1;
  if (known(r.pp) && r.pp > 1 && !bubble_known)
    a.unknowns.push_back("pipeline micro-batches: give " + input_phrase(Input::kMicroBatches) +
                         " to infer the pipeline bubble");
  return a;
}

namespace {

using detail::B;

/// No timed record: nothing to split; the report gives the log's wall clock when it has one.
Analysis untimed_run(const Run& run, Analysis a) {
  a.untimed = true;
  a.unknowns.insert(a.unknowns.begin(),
                    "per-step timing: the log has no timed iterations, so there is no MFU "
                    "and no waterfall (check the format with 'mfu inspect')");
  detail::Waterfall wf;
  if (known(run.first_timestamp_s) && known(run.last_timestamp_s)) {
    a.wall_time_s = std::max(0.0, run.last_timestamp_s - run.first_timestamp_s);
    a.clock_source = "the log's timestamps";
    wf.add(B::kOther, a.wall_time_s, BucketSource::kMeasured,
           "wall clock of the log (no step timing)");
  }
  a.gpu_hours = known(a.gpus) ? a.wall_time_s * a.gpus / 3600.0 : 0;
  a.buckets = wf.buckets(a.wall_time_s, a.gpus);
  for (std::size_t i = 0; i < run.iterations.size(); ++i)
    a.iterations_total += run.iterations.count(i);
  a.record_flags.assign(run.iterations.size(), kRecordUntimed);
  verify_attribution(a);
  return a;
}

/// Per-rank device detail of profiler traces, and HFU from the FLOPs the profiler counted.
void add_trace(const Run& run, Analysis& a) {
  a.trace = run.trace;
  if (!run.trace) return;
  double flops = 0;
  std::size_t with = 0;
  for (const auto& rk : run.trace->ranks)
    if (rk.has_flops) {
      flops += rk.flops;
      ++with;
    }
  const double G = a.gpus, P = a.peak_flops_per_gpu;
  if (with > 0 && known(G)) {
    // Ranks without a trace are assumed to do the same work as the mean traced rank.
    a.trace_executed_flops = flops / static_cast<double>(with) * G;
    if (known(P) && a.wall_time_s > 0) {
      a.hfu = *a.trace_executed_flops / (P * G * a.wall_time_s);
      if (*a.hfu > 1.0 + 1e-9)
        throw ImpossibleResult(
            fmt::format("HFU from the profiler's FLOP counts would be {}", format_percent(*a.hfu)),
            "check the accelerator or its peak, and the GPU count");
    }
  }
  for (const auto& msg : run.trace->warnings) a.warnings.push_back(msg);
}

void add_notes(const Run& run, const detail::Clock& clock, Analysis& a) {
  if (run.timing == TimingKind::kSampled && !clock.use)
    a.warnings.push_back(
        "the log times one iteration per line: the iterations between lines are assumed to take "
        "as long (wall time is estimated)");
  else if (run.timing == TimingKind::kSampled)
    a.warnings.push_back(
        "the log times one iteration per line: the step figures are those samples; the wall "
        "time, and what lies between the lines, come from the lines' timestamps");
  if (!clock.use && known(run.first_timestamp_s) && clock.warnings.empty())
    a.unknowns.push_back("startup and gaps between steps: the iteration lines carry no timestamps");
  if (run.truncated) a.warnings.push_back("the input is cut off: the last records may be missing");
  if (run.malformed_lines > 0)
    a.warnings.push_back(
        fmt::format("{} malformed record lines were skipped", run.malformed_lines));
}

/// Which rank held the job back: the one that set the step time in most steps, and the one
/// that waited longest for data (from the per-rank streams ingestion kept).
void add_rank_notes(const Run& run, Analysis& a) {
  const auto& streams = run.rank_streams;
  if (streams.size() < 2) return;
  std::size_t combined = 0;
  const RankStream* slowest = &streams.front();
  const RankStream* waiting = nullptr;
  for (const auto& s : streams) {
    combined += s.slowest_steps;
    if (s.slowest_steps > slowest->slowest_steps) slowest = &s;
    if (known(s.mean_data_s) && (!waiting || s.mean_data_s > waiting->mean_data_s)) waiting = &s;
  }
  // A rank that set at least half of the steps (and 10 of them) is a straggler, not noise.
  if (combined > 0 && slowest->slowest_steps >= 10 && 2 * slowest->slowest_steps >= combined)
    a.warnings.push_back(fmt::format(
        "rank {} set the step time in {} of {} steps (its mean step {}): a straggler; the other "
        "ranks wait for it (mfu inspect lists every rank)",
        slowest->rank, slowest->slowest_steps, combined, format_duration(slowest->mean_time_s)));
  if (waiting && waiting->mean_data_s > 0 && known(waiting->mean_time_s) &&
      waiting->mean_data_s > 0.05 * waiting->mean_time_s)
    a.warnings.push_back(
        fmt::format("rank {} waited longest for data: {} per step ({} of its step)", waiting->rank,
                    format_duration(waiting->mean_data_s),
                    format_percent(waiting->mean_data_s / waiting->mean_time_s)));
}

void append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

Analysis analyze(const Run& run, const AnalyzeOptions& opt, const GpuDatabase& db) {
  const detail::Resolved r = detail::resolve_inputs(run, opt, db);
  Analysis a = detail::resolved_analysis(run, r);
  detail::Records rec = detail::read_records(run, detail::pass_threads(opt.threads));
  append(a.warnings, rec.warnings);
  add_rank_notes(run, a);
  if (rec.timed == 0) return untimed_run(run, std::move(a));

  const detail::WorkPlan work = detail::plan_work(run, r, rec, a);
  const detail::Steady st = detail::find_steady(run, r, work, opt, rec, a);
  append(a.warnings, st.warnings);
  const detail::Clock clock = detail::plan_clock(run, rec);
  append(a.warnings, clock.warnings);
  const detail::EventPlan ev = detail::plan_events(run, rec, st, clock);
  append(a.warnings, ev.warnings);
  detail::Totals totals = detail::attribute(run, r, work, rec, st, clock, ev);
  detail::calibrate_from_trace(run, rec, st, db, totals, a);

  a.wall_time_s = detail::independent_wall_time(rec, clock, ev);
  a.clock_source = clock.source;
  // The per-iteration MFU is read where the walk wrote it, then freed: one of the largest.
  const detail::MfuSlots& slots = totals.mfu_per_iteration;
  a.mfu_per_iteration = detail::distribution_of_values(
      slots.size(), [&slots](std::size_t i) { return slots.at(i); }, rec.threads,
      [&slots] {
        std::vector<detail::WeightedF> v(slots.size());
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = slots.at(i);
        return v;
      });
  totals.mfu_per_iteration = {};
  detail::fill_headline(r, work, totals, a);
  detail::fill_buckets_and_fixes(opt, totals, a);
  detail::fill_series(run, work, rec, st, totals, a);
  add_trace(run, a);
  detail::fill_attribution_hint(a);
  add_notes(run, clock, a);
  verify_attribution(a);
  return a;
}

}  // namespace mfu
