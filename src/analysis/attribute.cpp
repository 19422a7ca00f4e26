// Stage 7: the walk over the run. Every record is decomposed once; every clock gap (before
// the first step, between steps, around a restart, after the last step) goes to the events in
// it or to the bucket the gap's place says; events outside records add their own seconds.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string_view>

#include "analysis/parallel.hpp"
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
  std::string_view what;  // its length known once (a char* gave a strlen per record's gap)
};

constexpr Gap kStartupGap{B::kStartup, BucketSource::kMeasured,
                          "from the first line of the log to the first step"};
constexpr Gap kRestartGap{B::kRestart, BucketSource::kInferred,
                          "downtime between the last step and the restart"};
constexpr Gap kBetweenGap{B::kIdle, BucketSource::kInferred, "gaps between logged steps"};
constexpr Gap kTailGap{B::kOther, BucketSource::kMeasured,
                       "after the last step (teardown, final save)"};

/// What the walks of all blocks share, read-only: the plan and where events and stalls fall.
struct WalkPlan {
  WalkPlan(const Run& run_, const Resolved& r_, const WorkPlan& work_, const Records& rec,
           const Steady& st_, const Clock& clock_, const EventPlan& ev_)
      : run(run_), r(r_), work(work_), st(st_), clock(clock_), ev(ev_) {
    can_ideal = known(r.peak) && known(r.work_gpus) && work.source != WorkSource::kNone;
    if (known(r.pp) && r.pp > 1 && known(r.micro_batches) && r.micro_batches >= 1)
      bubble = (r.pp - 1.0) / (r.micro_batches + r.pp - 1.0);
    for (const auto& e : run.events) {
      if (e.kind == EventKind::kCheckpointSave) checkpoint_steps.insert(e.step);
      if (e.kind == EventKind::kEval) eval_steps.insert(e.step);
    }
    for (std::size_t k = 0; k < ev.events.size(); ++k)
      events_at.emplace(ev.events[k].before_record, k);
    const auto timed =
        std::find_if(rec.time.begin(), rec.time.end(), [](double t) { return !std::isnan(t); });
    first_timed = static_cast<std::size_t>(timed - rec.time.begin());
  }

  const Run& run;
  const Resolved& r;
  const WorkPlan& work;
  const Steady& st;
  const Clock& clock;
  const EventPlan& ev;
  bool can_ideal = false;
  double bubble = 0;
  std::set<std::int64_t> checkpoint_steps, eval_steps;
  /// Events by the record they precede (the table's order need not be the lines' order).
  std::multimap<std::size_t, std::size_t> events_at;
  std::size_t first_timed = 0;  ///< its gap is the startup
};

/// What the walk over one block of records adds up.
struct BlockTotals {
  Totals t;
  std::array<double, kPartCount> parts{};
  std::array<double, kBucketCount> hosted{};
};

/// Walks the records of one block and the events before them into the block's totals. Each
/// timed record writes its per-iteration MFU into its own slot of a buffer shared by all
/// blocks (a hole when it has none), so the blocks need not be joined in order.
class Walker {
 public:
  /// A walker that adds to `so_far` (the totals of the blocks before).
  Walker(const WalkPlan& plan, Records& rec, MfuSlots* mfu_slots, std::size_t first_slot,
         BlockTotals so_far = {})
      : p_(plan), rec_(rec), mfu_(mfu_slots), slot_(first_slot), b_(std::move(so_far)) {}

  BlockTotals walk(std::size_t lo, std::size_t hi) {
    for_each_validated_in(
        p_.run.iterations, lo, hi,
        [&](std::size_t i, const Iteration& it) {
          if (std::isnan(rec_.time[i])) return;
          const Gap& g = i == p_.first_timed                     ? kStartupGap
                         : (rec_.flags[i] & kRecordSegmentStart) ? kRestartGap
                                                                 : kBetweenGap;
          place_events_before(i, p_.clock.use ? p_.clock.layout.gap(rec_, i) : 0.0, g);
          record(i, it);
        },
        // Not the time (the walk takes read_records' validated one, rec.time) nor the line (a
        // stall, rare, looks its own up): two columns fewer to read for every record.
        RecordFields::kWork | RecordFields::kPhases | RecordFields::kStep);
    return take();
  }
  BlockTotals take() { return std::move(b_); }

  /// The events that fall before record `next` (rec.time.size(): after all), and the clock
  /// gap they share.
  void place_events_before(std::size_t next, double gap, const Gap& fallback) {
    double in_gap = 0;
    const PlacedEvent* untimed = nullptr;
    const auto [from, to] = p_.events_at.equal_range(next);
    for (auto e = from; e != to; ++e) {
      const PlacedEvent& p = p_.ev.events[e->second];
      const std::string what = event_what(*p.event);
      b_.t.waterfall.add(p.bucket, p.in_gap + p.outside, BucketSource::kMeasured, what);
      in_gap += p.in_gap;
      if (!std::isfinite(p.event->duration_s) && p.event->kind != EventKind::kStall && !untimed)
        untimed = &p;
    }
    const double rest = gap - in_gap;
    if (!(rest > 0)) {
      b_.t.waterfall.add(fallback.bucket, std::max(rest, 0.0), fallback.source, fallback.what);
      return;
    }
    // An event without a duration in this gap explains it (inferred).
    if (untimed)
      b_.t.waterfall.add(untimed->bucket, rest, BucketSource::kInferred,
                         event_what(*untimed->event) + " (gap around them)");
    else
      b_.t.waterfall.add(fallback.bucket, rest, fallback.source, fallback.what);
  }

 private:
  ExcessKind excess_kind(std::size_t i, std::int64_t step) const {
    const std::uint8_t f = rec_.flags[i];
    if (f & kRecordWarmup) return ExcessKind::kWarmup;
    if (!(f & kRecordStall)) return ExcessKind::kNone;
    const auto span = static_cast<std::int64_t>(rec_.count(i));
    auto near = [&](const std::set<std::int64_t>& s) {
      auto it = s.lower_bound(step - span + 1);
      return it != s.end() && *it <= step + 1;
    };
    if (near(p_.checkpoint_steps)) return ExcessKind::kStallCheckpoint;
    if (near(p_.eval_steps)) return ExcessKind::kStallEval;
    if (p_.st.period_cause.rfind("save_interval", 0) == 0) return ExcessKind::kStallCheckpoint;
    if (p_.st.period_cause.rfind("eval_interval", 0) == 0) return ExcessKind::kStallEval;
    return ExcessKind::kStallIdle;
  }

  void record(std::size_t i, const Iteration& it);
  void count_work(std::size_t i, const Iteration& it, double fpi, const RecordInput& in,
                  const RecordSplit& s);
  void count_stall(std::size_t i, const Iteration& it, const RecordInput& in, const RecordSplit& s);

  const WalkPlan& p_;
  Records& rec_;
  MfuSlots* mfu_;     ///< null without per-iteration MFU
  std::size_t slot_;  ///< the next timed record's
  BlockTotals b_;
};

void Walker::record(std::size_t i, const Iteration& it) {
  const double c = rec_.count(i), t = rec_.time[i];
  const double span = p_.clock.use ? p_.clock.layout.span(rec_, i) : c * t;
  Totals& tot = b_.t;
  tot.iterations_total += rec_.count(i);
  if (mfu_) mfu_->set(slot_, std::numeric_limits<float>::quiet_NaN(), 0.0F);
  auto hosted = p_.ev.hosted.find(i);
  if (rec_.flags[i] & kRecordLost) {
    // Redone work; a save that ran inside it still took its time (measured).
    double rest = span;
    if (hosted != p_.ev.hosted.end())
      for (std::size_t b = 0; b < kBucketCount; ++b) {
        const double h = std::min(hosted->second[b], rest);
        b_.hosted[b] += h;
        rest -= h;
      }
    b_.parts[static_cast<std::size_t>(Part::kLost)] += rest;
    ++slot_;
    return;
  }
  bool filled = false;
  const double fpi = p_.work.flops(it, t, &filled);
  if (filled) ++tot.flops_filled;
  RecordInput in;
  in.span = span;
  in.count = c;
  in.timers = it.phase;
  in.ideal = known(fpi) && p_.can_ideal ? fpi * c / (p_.r.peak * p_.r.work_gpus) : kUnknown;
  in.bubble_fraction = p_.bubble;
  in.excess_kind = excess_kind(i, it.step);
  if (in.excess_kind != ExcessKind::kNone && known(p_.st.median))
    in.excess = std::max(0.0, span - c * p_.st.median);
  in.timer_median = &p_.st.timer_median;
  if (hosted != p_.ev.hosted.end()) in.hosted = &hosted->second;
  const RecordSplit s = decompose(in);
  for (std::size_t k = 0; k < kPartCount; ++k) b_.parts[k] += s.part[k];
  if (in.hosted)  // else s.hosted is all +0 (see add_unless_zero)
    for (std::size_t b = 0; b < kBucketCount; ++b) b_.hosted[b] += s.hosted[b];
  if (s.timers_over > 1e-9 * span) ++tot.timers_over;
  count_work(i, it, fpi, in, s);
  if (rec_.flags[i] & kRecordStall) count_stall(i, it, in, s);
  ++slot_;
}

void Walker::count_work(std::size_t i, const Iteration& it, double fpi, const RecordInput& in,
                        const RecordSplit& s) {
  const double c = rec_.count(i), t = rec_.time[i], span = in.span;
  const Resolved& r = p_.r;
  const WorkPlan& work = p_.work;
  Totals& tot = b_.t;
  const bool steady = !(rec_.flags[i] & kRecordWarmup);
  const double tokens = work.tokens(it);
  double flops = kUnknown;
  if (known(fpi)) {
    // Only the compute at peak that fit in the span counts (a squeezed clock).
    flops = p_.can_ideal && known(s.ideal_kept) ? s.ideal_kept * r.peak * r.work_gpus : fpi * c;
    if (known(in.ideal) && s.ideal_kept < in.ideal * (1 - 1e-12)) ++tot.capped;
    tot.flops_kept += flops;
    if (work.source == WorkSource::kModel) tot.flops_hardware += work.fpt_hardware * tokens * c;
  } else if (work.source != WorkSource::kNone) {
    rec_.flags[i] |= kRecordNoFlops;
    ++tot.flops_left_out;
    tot.time_no_flops += span;
  }
  if (known(tokens)) tot.tokens_all += tokens * c;
  tot.productive += span - in.excess;
  if (!steady) {
    tot.iterations_warm += rec_.count(i);
    tot.warm_time += span;
    return;
  }
  // Most of a record's parts are zero, and these adds chain through the buckets in memory:
  // leaving the zeros out took about a tenth off the walk of the 1 GiB native log, and keeps
  // the sums bit for bit (see add_unless_zero).
  for (std::size_t k = 0; k < kPartCount; ++k)
    add_unless_zero(tot.steady_split[static_cast<std::size_t>(kPartInfo[k].bucket)], s.part[k]);
  if (in.hosted)
    for (std::size_t b = 0; b < kBucketCount; ++b) tot.steady_split[b] += s.hosted[b];
  tot.steady_weight += c;
  tot.iterations_steady += rec_.count(i);
  tot.time_steady += span;
  if (known(flops))
    tot.flops_steady += flops;
  else if (work.source != WorkSource::kNone)
    tot.time_steady_no_flops += span;
  if (known(tokens)) tot.tokens_steady += tokens * c;
  if (known(fpi) && p_.can_ideal && mfu_)
    mfu_->set(slot_, static_cast<float>(fpi / (r.peak * r.work_gpus * t)), static_cast<float>(c));
  if (known(it.reported_mfu) && it.reported_mfu > 0) {
    tot.printed_mfu_sum += it.reported_mfu * c * t;
    tot.printed_mfu_time += c * t;
  }
  if (known(it.reported_flops_per_gpu)) {
    tot.reported_sum += it.reported_flops_per_gpu * c * t;
    tot.reported_time += c * t;
    if (r.framework_fpt && known(tokens) && known(r.work_gpus)) {
      const bool hfu =
          r.framework_convention && *r.framework_convention == Convention::kMegatronDeepSpeed;
      tot.recomputed_sum += (hfu ? r.framework_fpt->hardware : r.framework_fpt->model) * tokens * c;
    }
  }
}

/// The stalls kept for the report: the slowest first; past 64 only the 10 slowest stay.
void keep_worst(std::vector<Stall>& worst) {
  if (worst.size() <= 64) return;
  std::sort(worst.begin(), worst.end(),
            [](const Stall& x, const Stall& y) { return x.excess_s > y.excess_s; });
  worst.resize(10);
}

void Walker::count_stall(std::size_t i, const Iteration& it, const RecordInput& in,
                         const RecordSplit& s) {
  StallReport& sr = b_.t.stalls;
  const char* cause = in.excess_kind == ExcessKind::kStallCheckpoint ? "checkpoint"
                      : in.excess_kind == ExcessKind::kStallEval     ? "eval"
                                                                     : "";
  sr.worst.push_back(Stall{it.step, rec_.time[i], in.excess, p_.run.iterations.line(i), cause});
  keep_worst(sr.worst);
  sr.excess_s += in.excess;
  ++sr.count;
  for (std::size_t b = 0; b < kBucketCount; ++b) {
    if (!(s.excess_by_bucket[b] > 0)) continue;
    sr.excess_by_bucket[bucket_key(static_cast<B>(b))] += s.excess_by_bucket[b];
  }
}

/// Adds the totals of the next block to those of the blocks before it.
void add_block(BlockTotals& into, BlockTotals&& next) {
  Totals& a = into.t;
  Totals& b = next.t;
  a.waterfall.add(b.waterfall);
  for (std::size_t k = 0; k < kBucketCount; ++k) a.steady_split[k] += b.steady_split[k];
  a.steady_weight += b.steady_weight;
  for (auto [x, y] : {std::pair{&a.flops_kept, b.flops_kept},
                      {&a.flops_hardware, b.flops_hardware},
                      {&a.flops_steady, b.flops_steady},
                      {&a.time_steady, b.time_steady},
                      {&a.time_no_flops, b.time_no_flops},
                      {&a.time_steady_no_flops, b.time_steady_no_flops},
                      {&a.tokens_all, b.tokens_all},
                      {&a.tokens_steady, b.tokens_steady},
                      {&a.productive, b.productive},
                      {&a.reported_sum, b.reported_sum},
                      {&a.reported_time, b.reported_time},
                      {&a.recomputed_sum, b.recomputed_sum},
                      {&a.printed_mfu_sum, b.printed_mfu_sum},
                      {&a.printed_mfu_time, b.printed_mfu_time},
                      {&a.warm_time, b.warm_time}})
    *x += y;
  a.iterations_total += b.iterations_total;
  a.iterations_steady += b.iterations_steady;
  a.iterations_warm += b.iterations_warm;
  a.capped += b.capped;
  a.flops_filled += b.flops_filled;
  a.flops_left_out += b.flops_left_out;
  a.timers_over += b.timers_over;
  a.stalls.excess_s += b.stalls.excess_s;
  a.stalls.count += b.stalls.count;
  for (const auto& [bucket, s] : b.stalls.excess_by_bucket) a.stalls.excess_by_bucket[bucket] += s;
  for (Stall& s : b.stalls.worst) {
    a.stalls.worst.push_back(std::move(s));
    keep_worst(a.stalls.worst);
  }
  for (std::size_t k = 0; k < kPartCount; ++k) into.parts[k] += next.parts[k];
  for (std::size_t k = 0; k < kBucketCount; ++k) into.hosted[k] += next.hosted[k];
}

/// The records cut into blocks of kParallelBlock: each block is walked on its own and the
/// blocks' totals added in block order, whatever thread walked them, so the sums are the same
/// on any number of threads (a run of one block is summed record by record, as ever).
BlockTotals walk_blocks(const WalkPlan& plan, Records& rec, MfuSlots* mfu_slots,
                        std::size_t block) {
  const std::size_t n = rec.time.size();
  const std::size_t blocks = std::max<std::size_t>(1, (n + block - 1) / block);
  // The first MFU slot of each block: the timed records before it (one past the last block:
  // all of them, the slots the walk writes).
  std::vector<std::size_t> first_slot(blocks + 1, 0);
  for (std::size_t k = 1; k <= blocks; ++k) {
    first_slot[k] = first_slot[k - 1];
    for (std::size_t i = (k - 1) * block; i < std::min(n, k * block); ++i)
      first_slot[k] += std::isnan(rec.time[i]) ? 0 : 1;
  }
  std::vector<BlockTotals> got(blocks);
  // A part's thread walks the blocks that start in it (the parts are whole blocks of
  // kParallelBlock; a test's other block size only moves work between parts).
  run_parts(parts_of(n, rec.threads, kPartsPerThread),
            [&](std::size_t, std::size_t lo, std::size_t hi) {
              for (std::size_t k = (lo + block - 1) / block; k < blocks && k * block < hi; ++k) {
                Walker w(plan, rec, mfu_slots, first_slot[k]);
                got[k] = w.walk(k * block, std::min(n, (k + 1) * block));
              }
            });
  for (std::size_t k = 1; k < blocks; ++k) add_block(got.front(), std::move(got[k]));
  // Records timed when read but set aside since (outliers) have slots past those written.
  if (mfu_slots) mfu_slots->holes_from(first_slot[blocks]);
  return std::move(got.front());
}

}  // namespace

Totals attribute(const Run& run, const Resolved& r, const WorkPlan& work, Records& rec,
                 const Steady& st, const Clock& clock, const EventPlan& ev,
                 std::size_t block_records) {
  const WalkPlan plan(run, r, work, rec, st, clock, ev);
  // One slot per timed record (outliers, timed when read, are holes too); the holes are left
  // out by distribution(). The slots are not filled here: the walk writes each record's, on
  // the thread that walks it (which first touches the pages), then the rest become holes.
  // Filling them first was 22 MB written on one thread for the 1 GiB native log.
  MfuSlots mfu_slots;
  if (plan.can_ideal) {
    mfu_slots.value.resize(rec.timed);
    if (known(rec.uniform_count))
      mfu_slots.uniform_weight = static_cast<float>(rec.uniform_count);
    else
      mfu_slots.weight.resize(rec.timed);
  }
  BlockTotals b = walk_blocks(plan, rec, plan.can_ideal ? &mfu_slots : nullptr,
                              block_records ? block_records : kParallelBlock);
  // The events after the last record add to the sums directly, as a walk in one block does.
  Walker tail(plan, rec, nullptr, 0, std::move(b));
  tail.place_events_before(rec.time.size(), clock.use ? clock.tail : 0.0, kTailGap);
  b = tail.take();
  Totals& t = b.t;
  for (std::size_t p = 0; p < kPartCount; ++p) {
    const PartInfo& info = part_info(static_cast<Part>(p));
    t.waterfall.add(info.bucket, b.parts[p], info.source, info.what);
  }
  for (std::size_t k = 0; k < kBucketCount; ++k)
    t.waterfall.add(static_cast<B>(k), b.hosted[k], BucketSource::kMeasured,
                    "events inside slow steps");
  t.mfu_per_iteration = std::move(mfu_slots);
  return std::move(t);
}

double independent_wall_time(const Records& rec, const Clock& clock, const EventPlan& ev) {
  if (clock.use) return clock.end - clock.start;
  double wall = ev.outside_total;
  for (std::size_t i = 0; i < rec.time.size(); ++i)
    if (!std::isnan(rec.time[i])) wall += rec.time[i] * rec.count(i);
  return wall;
}

}  // namespace mfu::detail
