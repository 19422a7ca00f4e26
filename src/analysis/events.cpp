// Stage 5: events (checkpoints, evaluations, set-up) and records share seconds once. An
// event's duration first fills the clock gap it falls in (timeline), then the excess of the
// slow record it sits in (the record at its step, or the next one), and only the rest lies
// outside records (no timeline) or is more than the clock allows (warned).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/stages.hpp"
#include "mfu/units.hpp"

namespace mfu::detail {
namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

B bucket_of(EventKind k, bool before_first_record) {
  switch (k) {
    case EventKind::kCheckpointSave: return B::kCheckpoint;
    case EventKind::kCheckpointLoad: return before_first_record ? B::kStartup : B::kRestart;
    case EventKind::kEval: return B::kEval;
    case EventKind::kStartup: return B::kStartup;
    case EventKind::kRestart: return B::kRestart;
    case EventKind::kStall: return B::kIdle;
    case EventKind::kOther: return B::kOther;
  }
  return B::kOther;
}

/// The timed records on either side of an event's slot (place_events), walked forward once in
/// the order of the slots.
class TimedAround {
 public:
  explicit TimedAround(const Records& rec) : rec_(rec), next_(first_timed(0)) {}
  /// Moves to slot s (not below the last one).
  void move_to(std::size_t s) {
    while (next_ != kNone && next_ < s) {
      prev_ = next_;
      next_ = first_timed(next_ + 1);
    }
  }
  /// The first timed record at or after the slot (kNone when there is none).
  [[nodiscard]] std::size_t next() const { return next_; }
  /// The last timed record before the slot (kNone when there is none).
  [[nodiscard]] std::size_t previous() const { return prev_; }

 private:
  [[nodiscard]] std::size_t first_timed(std::size_t i) const {
    while (i < rec_.time.size() && std::isnan(rec_.time[i])) ++i;
    return i < rec_.time.size() ? i : kNone;
  }

  const Records& rec_;
  std::size_t next_ = kNone, prev_ = kNone;
};

bool covers(const Run& run, const Records& rec, std::size_t i, std::int64_t step) {
  const std::int64_t last = run.iterations.step(i);
  return step <= last && step > last - static_cast<std::int64_t>(rec.count(i));
}

/// The record an event sits in: the timed record just before or just after its slot whose
/// steps include the event's step. (Frameworks that stop their step timer around a save or an
/// evaluation, like Megatron-LM's interval timer, print the event at a step the next record does
/// not cover, so its seconds stay outside.)
std::size_t host_of(const Run& run, const Records& rec, const Event& e, std::size_t prev,
                    std::size_t next) {
  if (e.step < 0) return kNone;
  auto usable = [&](std::size_t i) { return i != kNone; };
  if (usable(prev) && covers(run, rec, prev, e.step)) return prev;
  if (usable(next) && covers(run, rec, next, e.step)) return next;
  return kNone;
}

double event_duration(const Event& e) {
  return std::isfinite(e.duration_s) && e.duration_s >= 0 ? e.duration_s : kUnknown;
}

}  // namespace

EventPlan plan_events(const Run& run, const Records& rec, const Steady& st, const Clock& clock) {
  EventPlan plan;
  std::vector<const Event*> events;
  for (const auto& e : run.events)
    if (e.kind != EventKind::kRestart) events.push_back(&e);
  if (events.empty()) return plan;  // nothing to place: no pass over the records
  TimedAround around(rec);
  const std::size_t n = rec.time.size();
  std::map<std::size_t, double> gap_used;  // clock gap seconds taken, by the record after it
  double tail_left = clock.tail;
  std::map<std::size_t, double> excess_used;
  auto excess_left = [&](std::size_t i) {
    const double span = clock.use ? clock.layout.span(rec, i) : rec.time[i] * rec.count(i);
    const double pace = known(st.median) ? st.median * rec.count(i) : span;
    return std::max(0.0, span - pace - excess_used[i]);
  };
  double dropped = 0;
  for (const auto& [e, slot] : place_events(run.iterations, std::move(events))) {
    around.move_to(slot);
    PlacedEvent p;
    p.event = e;
    p.before_record = around.next() != kNone ? around.next() : n;
    p.bucket = bucket_of(e->kind, around.previous() == kNone);
    double d = event_duration(*e);
    if (known(d) && clock.use) {
      const bool in_tail = p.before_record >= n;
      const double left =
          in_tail ? tail_left : clock.layout.gap(rec, p.before_record) - gap_used[p.before_record];
      p.in_gap = std::min(d, std::max(0.0, left));
      if (in_tail)
        tail_left -= p.in_gap;
      else
        gap_used[p.before_record] += p.in_gap;
      d -= p.in_gap;
    }
    if (known(d) && d > 0) {
      p.host = host_of(run, rec, *e, around.previous(), around.next());
      if (p.host != kNone) {
        p.hosted = std::min(d, excess_left(p.host));
        excess_used[p.host] += p.hosted;
        plan.hosted[p.host][static_cast<std::size_t>(p.bucket)] += p.hosted;
        d -= p.hosted;
      }
      if (clock.use) {
        dropped += d;
      } else {
        p.outside = d;
        plan.outside_total += d;
      }
    }
    plan.events.push_back(p);
  }
  if (dropped > 1e-6)
    plan.warnings.push_back(fmt::format(
        "events claim {} more than the log's clock leaves between and inside steps: that much "
        "of their durations is not counted",
        format_duration(dropped)));
  return plan;
}

}  // namespace mfu::detail
