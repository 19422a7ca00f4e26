// Stage 7: the walk over the run. Every record is decomposed once; every clock gap (before
// the first step, between steps, around a restart, after the last step) goes to the events in
// it or to the bucket the gap's place says; events outside records add their own seconds.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/stages.hpp"
#include "mfu/error.hpp"

namespace mfu::detail {
namespace {

std::string event_what(const Event& e) {
  switch (e.kind) {
    case EventKind::kCheckpointSave: return "checkpoint saves";
    case EventKind::kCheckpointLoad: return "checkpoint loads";
    case EventKind::kEval: return "evaluation passes";
    case EventKind::kStartup: return e.detail.empty() ? "setup" : e.detail;
    case EventKind::kRestart: return "restarts";
    case EventKind::kStall: return "stalls";
    case EventKind::kOther: return e.detail.empty() ? "other events" : e.detail;
  }
  return "events";
}

struct Gap {
  B bucket;
  BucketSource source;
  const char* what;
};

constexpr Gap kStartupGap{B::kStartup, BucketSource::kMeasured,
                          "from the first line of the log to the first step"};
constexpr Gap kRestartGap{B::kRestart, BucketSource::kInferred,
                          "downtime between the last step and the restart"};
constexpr Gap kBetweenGap{B::kIdle, BucketSource::kInferred, "gaps between logged steps"};
constexpr Gap kTailGap{B::kOther, BucketSource::kMeasured,
                       "after the last step (teardown, final save)"};

/// Walks records and the events between them, accumulating into Totals.
class Walker {
 public:
  Walker(const Run& run, const Resolved& r, const WorkPlan& work, Records& rec, const Steady& st,
         const Clock& clock, const EventPlan& ev)
      : run_(run), r_(r), work_(work), rec_(rec), st_(st), clock_(clock), ev_(ev) {
    can_ideal_ = known(r.peak) && known(r.work_gpus) && work.source != WorkSource::kNone;
    if (known(r.pp) && r.pp > 1 && known(r.micro_batches) && r.micro_batches >= 1)
      bubble_ = (r.pp - 1.0) / (r.micro_batches + r.pp - 1.0);
    for (const auto& e : run.events) {
      if (e.kind == EventKind::kCheckpointSave) checkpoint_steps_.insert(e.step);
      if (e.kind == EventKind::kEval) eval_steps_.insert(e.step);
    }
    for (std::size_t k = 0; k < ev.events.size(); ++k)
      events_at_.emplace(ev.events[k].before_record, k);
  }

  Totals run() {
    bool first = true;
    if (can_ideal_) t_.mfu_per_iteration.reserve(rec_.timed);  // one per timed record at most
    for_each_validated(run_.iterations, [&](std::size_t i, const Iteration& it) {
      if (std::isnan(rec_.time[i])) return;
      const Gap& g =
          first ? kStartupGap : ((rec_.flags[i] & kRecordSegmentStart) ? kRestartGap : kBetweenGap);
      place_events_before(i, clock_.use ? clock_.gap[i] : 0.0, g);
      first = false;
      record(i, it);
    });
    place_events_before(rec_.time.size(), clock_.use ? clock_.tail : 0.0, kTailGap);
    for (std::size_t p = 0; p < kPartCount; ++p) {
      const PartInfo& info = part_info(static_cast<Part>(p));
      t_.waterfall.add(info.bucket, parts_[p], info.source, info.what);
    }
    for (std::size_t b = 0; b < kBucketCount; ++b)
      t_.waterfall.add(static_cast<B>(b), hosted_[b], BucketSource::kMeasured,
                       "events inside slow steps");
    return std::move(t_);
  }

 private:
  /// The events that fall before record `next` (rec.time.size(): after all), and the clock
  /// gap they share.
  void place_events_before(std::size_t next, double gap, const Gap& fallback) {
    double in_gap = 0;
    const PlacedEvent* untimed = nullptr;
    const auto [from, to] = events_at_.equal_range(next);
    for (auto e = from; e != to; ++e) {
      const PlacedEvent& p = ev_.events[e->second];
      const std::string what = event_what(*p.event);
      t_.waterfall.add(p.bucket, p.in_gap + p.outside, BucketSource::kMeasured, what);
      in_gap += p.in_gap;
      if (!std::isfinite(p.event->duration_s) && p.event->kind != EventKind::kStall && !untimed)
        untimed = &p;
    }
    const double rest = gap - in_gap;
    if (!(rest > 0)) {
      t_.waterfall.add(fallback.bucket, std::max(rest, 0.0), fallback.source, fallback.what);
      return;
    }
    // An event without a duration in this gap explains it (inferred).
    if (untimed)
      t_.waterfall.add(untimed->bucket, rest, BucketSource::kInferred,
                       event_what(*untimed->event) + " (gap around them)");
    else
      t_.waterfall.add(fallback.bucket, rest, fallback.source, fallback.what);
  }

  ExcessKind excess_kind(std::size_t i, std::int64_t step) const {
    const std::uint8_t f = rec_.flags[i];
    if (f & kRecordWarmup) return ExcessKind::kWarmup;
    if (!(f & kRecordStall)) return ExcessKind::kNone;
    const auto span = static_cast<std::int64_t>(rec_.count[i]);
    auto near = [&](const std::set<std::int64_t>& s) {
      auto it = s.lower_bound(step - span + 1);
      return it != s.end() && *it <= step + 1;
    };
    if (near(checkpoint_steps_)) return ExcessKind::kStallCheckpoint;
    if (near(eval_steps_)) return ExcessKind::kStallEval;
    if (st_.period_cause.rfind("save_interval", 0) == 0) return ExcessKind::kStallCheckpoint;
    if (st_.period_cause.rfind("eval_interval", 0) == 0) return ExcessKind::kStallEval;
    return ExcessKind::kStallIdle;
  }

  void record(std::size_t i, const Iteration& it);
  void count_work(std::size_t i, const Iteration& it, double fpi, const RecordInput& in,
                  const RecordSplit& s);
  void count_stall(std::size_t i, const Iteration& it, const RecordInput& in, const RecordSplit& s);

  const Run& run_;
  const Resolved& r_;
  const WorkPlan& work_;
  Records& rec_;
  const Steady& st_;
  const Clock& clock_;
  const EventPlan& ev_;
  bool can_ideal_ = false;
  double bubble_ = 0;
  std::set<std::int64_t> checkpoint_steps_, eval_steps_;
  /// Events by the record they precede (the table's order need not be the lines' order).
  std::multimap<std::size_t, std::size_t> events_at_;
  std::array<double, kPartCount> parts_{};
  std::array<double, kBucketCount> hosted_{};
  Totals t_;
};

void Walker::record(std::size_t i, const Iteration& it) {
  const double c = rec_.count[i], t = rec_.time[i];
  const double span = clock_.use ? clock_.span[i] : c * t;
  t_.iterations_total += rec_.count[i];
  auto hosted = ev_.hosted.find(i);
  if (rec_.flags[i] & kRecordLost) {
    // Redone work; a save that ran inside it still took its time (measured).
    double rest = span;
    if (hosted != ev_.hosted.end())
      for (std::size_t b = 0; b < kBucketCount; ++b) {
        const double h = std::min(hosted->second[b], rest);
        hosted_[b] += h;
        rest -= h;
      }
    parts_[static_cast<std::size_t>(Part::kLost)] += rest;
    return;
  }
  bool filled = false;
  const double fpi = work_.flops(it, t, &filled);
  if (filled) ++t_.flops_filled;
  RecordInput in;
  in.span = span;
  in.count = c;
  in.timers = it.phase;
  in.ideal = known(fpi) && can_ideal_ ? fpi * c / (r_.peak * r_.work_gpus) : kUnknown;
  in.bubble_fraction = bubble_;
  in.excess_kind = excess_kind(i, it.step);
  if (in.excess_kind != ExcessKind::kNone && known(st_.median))
    in.excess = std::max(0.0, span - c * st_.median);
  in.timer_median = &st_.timer_median;
  if (hosted != ev_.hosted.end()) in.hosted = &hosted->second;
  const RecordSplit s = decompose(in);
  for (std::size_t p = 0; p < kPartCount; ++p) parts_[p] += s.part[p];
  for (std::size_t b = 0; b < kBucketCount; ++b) hosted_[b] += s.hosted[b];
  if (s.timers_over > 1e-9 * span) ++t_.timers_over;
  count_work(i, it, fpi, in, s);
  if (rec_.flags[i] & kRecordStall) count_stall(i, it, in, s);
}

void Walker::count_work(std::size_t i, const Iteration& it, double fpi, const RecordInput& in,
                        const RecordSplit& s) {
  const double c = rec_.count[i], t = rec_.time[i], span = in.span;
  const bool steady = !(rec_.flags[i] & kRecordWarmup);
  const double tokens = work_.tokens(it);
  double flops = kUnknown;
  if (known(fpi)) {
    // Only the compute at peak that fit in the span counts (a squeezed clock).
    flops = can_ideal_ && known(s.ideal_kept) ? s.ideal_kept * r_.peak * r_.work_gpus : fpi * c;
    if (known(in.ideal) && s.ideal_kept < in.ideal * (1 - 1e-12)) ++t_.capped;
    t_.flops_kept += flops;
    if (work_.source == WorkSource::kModel) t_.flops_hardware += work_.fpt_hardware * tokens * c;
  } else if (work_.source != WorkSource::kNone) {
    rec_.flags[i] |= kRecordNoFlops;
    ++t_.flops_left_out;
    t_.time_no_flops += span;
  }
  if (known(tokens)) t_.tokens_all += tokens * c;
  t_.productive += span - in.excess;
  if (!steady) {
    t_.iterations_warm += rec_.count[i];
    t_.warm_time += span;
    return;
  }
  for (std::size_t p = 0; p < kPartCount; ++p)
    t_.steady_split[static_cast<std::size_t>(part_info(static_cast<Part>(p)).bucket)] += s.part[p];
  for (std::size_t b = 0; b < kBucketCount; ++b) t_.steady_split[b] += s.hosted[b];
  t_.steady_weight += c;
  t_.iterations_steady += rec_.count[i];
  t_.time_steady += span;
  if (known(flops))
    t_.flops_steady += flops;
  else if (work_.source != WorkSource::kNone)
    t_.time_steady_no_flops += span;
  if (known(tokens)) t_.tokens_steady += tokens * c;
  if (known(fpi) && can_ideal_)
    t_.mfu_per_iteration.push_back(
        {static_cast<float>(fpi / (r_.peak * r_.work_gpus * t)), static_cast<float>(c)});
  if (known(it.reported_mfu) && it.reported_mfu > 0) {
    t_.printed_mfu_sum += it.reported_mfu * c * t;
    t_.printed_mfu_time += c * t;
  }
  if (known(it.reported_flops_per_gpu)) {
    t_.reported_sum += it.reported_flops_per_gpu * c * t;
    t_.reported_time += c * t;
    if (r_.framework_fpt && known(tokens) && known(r_.work_gpus)) {
      const bool hfu =
          r_.framework_convention && *r_.framework_convention == Convention::kMegatronDeepSpeed;
      t_.recomputed_sum +=
          (hfu ? r_.framework_fpt->hardware : r_.framework_fpt->model) * tokens * c;
    }
  }
}

void Walker::count_stall(std::size_t i, const Iteration& it, const RecordInput& in,
                         const RecordSplit& s) {
  StallReport& sr = t_.stalls;
  const char* cause = in.excess_kind == ExcessKind::kStallCheckpoint ? "checkpoint"
                      : in.excess_kind == ExcessKind::kStallEval     ? "eval"
                                                                     : "";
  sr.worst.push_back(Stall{it.step, rec_.time[i], in.excess, it.line, cause});
  if (sr.worst.size() > 64) {
    std::sort(sr.worst.begin(), sr.worst.end(),
              [](const Stall& x, const Stall& y) { return x.excess_s > y.excess_s; });
    sr.worst.resize(10);
  }
  sr.excess_s += in.excess;
  ++sr.count;
  for (std::size_t b = 0; b < kBucketCount; ++b) {
    if (!(s.excess_by_bucket[b] > 0)) continue;
    sr.excess_by_bucket[bucket_key(static_cast<B>(b))] += s.excess_by_bucket[b];
  }
}

}  // namespace

Totals attribute(const Run& run, const Resolved& r, const WorkPlan& work, Records& rec,
                 const Steady& st, const Clock& clock, const EventPlan& ev) {
  return Walker(run, r, work, rec, st, clock, ev).run();
}

double independent_wall_time(const Records& rec, const Clock& clock, const EventPlan& ev) {
  if (clock.use) return clock.end - clock.start;
  double wall = ev.outside_total;
  for (std::size_t i = 0; i < rec.time.size(); ++i)
    if (!std::isnan(rec.time[i])) wall += rec.time[i] * rec.count[i];
  return wall;
}

}  // namespace mfu::detail
