// Stage 6: one decomposition per record, in one order (DESIGN.md): the record's own timers
// (capped, never rescaled), events inside it, compute at peak from its FLOPs, compute below
// peak, the pipeline bubble, and the residual. A slow record's excess that no timer explains
// moves from the residual to the bucket of its kind (warm-up, stall, checkpoint, evaluation).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/stages.hpp"
#include "mfu/error.hpp"

namespace mfu::detail {
namespace {

std::size_t idx(Part p) {
  return static_cast<std::size_t>(p);
}
std::size_t idx(Phase p) {
  return static_cast<std::size_t>(p);
}

/// The timers that are a bucket of their own, in the order they are taken.
constexpr std::array<std::pair<Phase, Part>, 6> kTimerParts{{
    {Phase::kIdle, Part::kIdleTimer},
    {Phase::kComm, Part::kCommTimer},
    {Phase::kData, Part::kDataTimer},
    {Phase::kOptimizer, Part::kOptimizerTimer},
    {Phase::kGenerate, Part::kGenerateTimer},
    {Phase::kOther, Part::kOtherTimer},
}};

double whole(const RecordInput& in, Phase p) {
  const double v = in.timers[idx(p)];
  return known(v) ? v * in.count : 0.0;
}

double median_of(const RecordInput& in, Phase p) {
  return in.timer_median ? in.count * (*in.timer_median)[idx(p)] : 0.0;
}

struct ComputeSpan {
  double span = 0;  ///< time the compute timers cover (or the whole region)
  bool timed = false;
};

ComputeSpan compute_span(const RecordInput& in, const RecordSplit& s, double region) {
  const auto& t = in.timers;
  if (known(t[idx(Phase::kForward)]) || known(t[idx(Phase::kBackward)]))
    return {std::min(region, whole(in, Phase::kForward) + whole(in, Phase::kBackward)), true};
  if (known(t[idx(Phase::kCompute)])) return {std::min(region, whole(in, Phase::kCompute)), true};
  if (known(t[idx(Phase::kForwardBackward)])) {
    // Megatron's forward-backward span holds the communication and data waits timed apart.
    const double inner = whole(in, Phase::kForwardBackward) - s.part[idx(Part::kCommTimer)] -
                         s.part[idx(Part::kDataTimer)];
    return {std::min(region, std::max(0.0, inner)), true};
  }
  return {region, false};
}

/// Timer growth over the steady medians: the parts that grew and by how much (capped by the
/// part), in the order they are taken.
std::vector<std::pair<Part, double>> growth(const RecordInput& in, const RecordSplit& s) {
  std::vector<std::pair<Part, double>> g;
  for (const auto& [phase, part] : kTimerParts) {
    const double grew = std::max(0.0, whole(in, phase) - median_of(in, phase));
    if (grew > 0) g.emplace_back(part, std::min(grew, s.part[idx(part)]));
  }
  const double fb =
      whole(in, Phase::kForward) + whole(in, Phase::kBackward) + whole(in, Phase::kCompute);
  const double fb_med = median_of(in, Phase::kForward) + median_of(in, Phase::kBackward) +
                        median_of(in, Phase::kCompute);
  if (fb > fb_med)
    g.emplace_back(Part::kInefficiency, std::min(fb - fb_med, s.part[idx(Part::kInefficiency)]));
  return g;
}

/// The parts decompose() may set before it computes the residual: the residual parts and those
/// after them are set later (annotate_excess) or by the walk (lost work).
constexpr std::size_t kPartsBeforeResidual = static_cast<std::size_t>(Part::kResidualTimed);
static_assert(Part::kInefficiency < Part::kResidualTimed &&
              Part::kResidualTimed < Part::kResidualUntimed &&
              Part::kResidualUntimed < Part::kResidualNoPeak &&
              Part::kResidualNoPeak < Part::kWarmupExcess && Part::kWarmupExcess < Part::kLost);

bool at_event(ExcessKind k) {
  return k == ExcessKind::kStallCheckpoint || k == ExcessKind::kStallEval;
}

Part excess_part(ExcessKind k) {
  switch (k) {
    case ExcessKind::kWarmup: return Part::kWarmupExcess;
    case ExcessKind::kStallCheckpoint: return Part::kStallCheckpoint;
    case ExcessKind::kStallEval: return Part::kStallEval;
    case ExcessKind::kStallIdle:
    case ExcessKind::kNone: return Part::kStallIdle;
  }
  return Part::kStallIdle;
}

/// A slow record's excess: events inside it explain their share; then the timers that grew
/// explain theirs (they stay in their buckets), except next to an evaluation or a checkpoint,
/// where what grew is that event's work (Megatron-DeepSpeed times evaluation batches under
/// forward-compute and batch-generator: examples/megatron-deepspeed_gpt3-125m_8gpu.log,
/// iteration 110) and moves to its bucket; what is left leaves the residual.
void annotate_excess(const RecordInput& in, Part residual, RecordSplit& s) {
  if (!(in.excess > 0) || in.excess_kind == ExcessKind::kNone) return;
  double left = in.excess;
  double hosted = 0;
  for (double h : s.hosted) hosted += h;
  const double by_events = std::min(left, hosted);
  for (std::size_t b = 0; b < kBucketCount; ++b)
    if (hosted > 0) s.excess_by_bucket[b] += by_events * s.hosted[b] / hosted;
  left -= by_events;
  s.excess_explained = by_events;
  const Part to = excess_part(in.excess_kind);
  const auto to_bucket = static_cast<std::size_t>(part_info(to).bucket);
  for (const auto& [part, grew] : growth(in, s)) {
    const double m = std::min(grew, left);
    left -= m;
    if (at_event(in.excess_kind)) {
      s.part[idx(part)] -= m;
      s.part[idx(to)] += m;
      s.excess_moved += m;
      s.excess_by_bucket[to_bucket] += m;
    } else {
      s.excess_explained += m;
      s.excess_by_bucket[static_cast<std::size_t>(part_info(part).bucket)] += m;
    }
  }
  const double m = std::max(0.0, std::min(left, s.part[idx(residual)]));
  s.part[idx(residual)] -= m;
  s.part[idx(to)] += m;
  s.excess_moved += m;
  s.excess_by_bucket[to_bucket] += m;
}

}  // namespace

RecordSplit decompose(const RecordInput& in) {
  RecordSplit s;
  const double R = in.span;
  // Compute at peak keeps its room: timers that claim it overlap the compute they time.
  const bool has_ideal = known(in.ideal);
  s.ideal_kept = has_ideal ? std::clamp(in.ideal, 0.0, R) : kUnknown;
  const double reserve = has_ideal ? s.ideal_kept : 0.0;
  double room = R - reserve;
  for (const auto& [phase, part] : kTimerParts) {
    const double v = whole(in, phase), taken = std::min(v, room);
    s.part[idx(part)] = taken;
    s.timers_over += v - taken;
    room -= taken;
  }
  if (in.hosted)
    for (std::size_t b = 0; b < kBucketCount; ++b) {
      s.hosted[b] = std::min((*in.hosted)[b], room);
      room -= s.hosted[b];
    }
  const double region = room + reserve;  // compute and what no timer covers
  auto [cs, timed] = compute_span(in, s, region);
  double untimed = region - cs;
  if (in.bubble_fraction > 0) {
    // Pipeline bubble: (p-1)/(m+p-1) of the forward-backward span (Narayanan et al. 2021,
    // Sec. 2.2), never the room of the compute at peak.
    const double fb = whole(in, Phase::kForwardBackward);
    const double over =
        fb > 0
            ? std::min(region + s.part[idx(Part::kCommTimer)] + s.part[idx(Part::kDataTimer)], fb)
            : region;
    const double bubble = std::min(in.bubble_fraction * over, region - reserve);
    const double from_untimed = std::min(bubble, untimed);
    untimed -= from_untimed;
    cs -= std::min(bubble - from_untimed, cs);
    s.part[idx(Part::kBubble)] = bubble;
  }
  Part residual = Part::kResidualNoPeak;
  if (has_ideal) {
    s.part[idx(Part::kCompute)] = s.ideal_kept;
    const double in_compute = std::min(s.ideal_kept, cs);
    if (timed) s.part[idx(Part::kInefficiency)] = cs - in_compute;
    residual = timed ? Part::kResidualTimed : Part::kResidualUntimed;
  } else if (timed) {
    s.part[idx(Part::kComputeTimedNoPeak)] = cs;
    residual = Part::kResidualTimed;
  }
  // The parts before the residual, in order: those after it are still +0 here, and a sum from
  // +0 is the same bits with or without zero terms (add_unless_zero), so neither they nor a
  // branch per part are needed (the branches were a fifth of decompose's samples, perf).
  double used = 0;
  for (std::size_t k = 0; k < kPartsBeforeResidual; ++k) used += s.part[k];
  if (in.hosted)  // else s.hosted is all +0
    for (double v : s.hosted) used += v;
  s.part[idx(residual)] = R - used;
  if (s.part[idx(residual)] < -1e-9 * std::max(1.0, R))
    throw InternalError(fmt::format("a record of {} s was split into {} s of parts", R, used));
  annotate_excess(in, residual, s);
  return s;
}

}  // namespace mfu::detail
