// mfu::analyze: resolves the inputs, finds warm-up, stalls and restarts, splits the wall time
// into buckets that add up to it exactly, and derives MFU, goodput and the fixes worth most.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "analysis/resolve.hpp"
#include "analysis/stats.hpp"
#include "analysis/waterfall.hpp"
#include "mfu/error.hpp"
#include "mfu/units.hpp"
#include "text.hpp"

namespace mfu {

const char* to_string(BucketSource s) {
  switch (s) {
    case BucketSource::kMeasured: return "measured";
    case BucketSource::kInferred: return "inferred";
    case BucketSource::kResidual: return "residual";
    case BucketSource::kNone: return "none";
  }
  return "?";
}

const Bucket* Analysis::bucket(const std::string& name) const {
  for (const auto& b : buckets)
    if (b.name == name) return &b;
  return nullptr;
}

double iteration_tokens(const Analysis& a, const Iteration& it) {
  return detail::tokens_of(it, a.seq_len, a.default_tokens_per_iteration);
}

double iteration_model_flops(const Analysis& a, const Iteration& it) {
  if (a.flops_from_log && known(it.model_flops)) return it.model_flops;
  if (a.flops_from_framework) {
    if (known(it.reported_flops_per_gpu) && known(it.time_s) && known(a.gpus))
      return it.reported_flops_per_gpu * it.time_s * a.gpus;
    return a.default_flops_per_iteration;
  }
  if (known(a.model_flops_per_token)) {
    const double tok = iteration_tokens(a, it);
    if (known(tok)) return a.model_flops_per_token * tok;
  }
  return a.default_flops_per_iteration;
}

double iteration_mfu(const Analysis& a, const Iteration& it) {
  const double f = iteration_model_flops(a, it);
  if (!known(f) || !known(it.time_s) || !known(a.peak_flops_per_gpu) || !known(a.gpus) ||
      it.time_s <= 0)
    return kUnknown;
  return f / (a.peak_flops_per_gpu * a.gpus * it.time_s);
}

namespace {

using detail::as_count;
using detail::B;
using detail::Waterfall;

struct EventIndex {
  std::set<std::int64_t> checkpoint_steps;
  std::set<std::int64_t> eval_steps;
  bool near(const std::set<std::int64_t>& s, std::int64_t step, std::int64_t span) const {
    auto it = s.lower_bound(step - span + 1);
    return it != s.end() && *it <= step + 1;
  }
};

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

const char* advice_for(const std::string& bucket) {
  if (bucket == "comm")
    return "overlap gradient reduction and parameter gathers with compute (DDP/FSDP bucketing, "
           "Megatron "
           "--overlap-grad-reduce --overlap-param-gather), keep tensor parallelism inside a node, "
           "check NCCL bus "
           "bandwidth";
  if (bucket == "io")
    return "more data-loader workers, prefetching and pinned memory, or faster storage";
  if (bucket == "idle")
    return "find the slow steps (GC, logging, host syncs) and shrink the pipeline bubble with more "
           "micro-batches "
           "or an interleaved schedule";
  if (bucket == "checkpoint")
    return "save asynchronously, or less often (mfu whatif gives the Young/Daly interval)";
  if (bucket == "restart")
    return "checkpoint more often and fix the cause of the failures; recovery time is GPU time";
  if (bucket == "startup") return "cache compilation and data indices; start from a warm image";
  if (bucket == "eval") return "evaluate less often or on fewer batches";
  if (bucket == "compute_inefficiency")
    return "kernels run below peak: fused and FlashAttention kernels, larger micro-batches, FP8 "
           "where accuracy allows";
  if (bucket == "other")
    return "unattributed: enable timers (Megatron --timing-log-level 2, DeepSpeed "
           "wall_clock_breakdown) or take a "
           "PyTorch profiler trace and run mfu analyze on it";
  return "";
}

}  // namespace

Analysis analyze(const Run& run, const AnalyzeOptions& opt, const GpuDatabase& db) {
  detail::Resolved r = detail::resolve_inputs(run, opt, db);
  Analysis a;
  a.format = run.format;
  a.inputs = run.inputs;
  a.used = r.used;
  a.unknowns = r.unknowns;
  a.warnings = r.warnings;
  if (r.spec) {
    a.gpu = r.spec->id;
    a.gpu_name = r.spec->name;
    a.tdp_w = r.spec->tdp_w;
  }
  a.dtype = r.dtype;
  a.peak_flops_per_gpu = r.peak;
  a.gpus = r.gpus;
  a.convention = to_string(r.convention);
  a.recompute = to_string(r.recompute);
  a.seq_len = r.seq_len;
  a.default_tokens_per_iteration = r.tokens_default;
  a.default_flops_per_iteration = r.flops_default;
  if (r.fpt) {
    a.model_flops_per_token = r.fpt->model;
    a.hardware_flops_per_token = r.fpt->hardware;
  }

  const IterationTable& T = run.iterations;
  const std::size_t n = T.size();

  // ---- Which records count. Records without a valid time are skipped (they were already
  // reported as diagnostics when malformed).
  std::vector<double> time(n, kUnknown);
  std::vector<std::uint32_t> count(n, 1);
  std::vector<std::uint8_t> flag(n, 0);  // bit 0 lost, 1 warm-up, 2 stall, 3 segment start
  constexpr std::uint8_t kLost = 1, kWarm = 2, kStall = 4, kSegStart = 8;
  bool any_log_flops = false, any_reported = false, all_ts = n > 0;
  std::size_t timed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Iteration it = T[i];
    count[i] = it.count;
    if (known(it.time_s) && it.time_s > 0 && std::isfinite(it.time_s)) {
      time[i] = it.time_s;
      ++timed;
    }
    any_log_flops = any_log_flops || known(it.model_flops);
    any_reported = any_reported || known(it.reported_flops_per_gpu);
    all_ts = all_ts && known(it.timestamp_s);
    if (i == 0 || it.step < T[i - 1].step) flag[i] |= kSegStart;
  }
  if (timed == 0) {
    // Nothing to split: the report says so and gives the wall clock when the log has one.
    a.unknowns.insert(a.unknowns.begin(),
                      "per-step timing: the log has no timed iterations, so there is no MFU "
                      "and no waterfall (check the format with 'mfu inspect')");
    Waterfall wf;
    if (known(run.first_timestamp_s) && known(run.last_timestamp_s))
      wf.add(B::kOther, run.last_timestamp_s - run.first_timestamp_s, BucketSource::kMeasured,
             "wall clock of the log (no step timing)");
    a.wall_time_s = wf.total();
    a.gpu_hours = known(r.gpus) ? a.wall_time_s * r.gpus / 3600.0 : 0;
    a.buckets = wf.buckets(a.wall_time_s, r.gpus);
    for (std::size_t i = 0; i < n; ++i) a.iterations_total += T[i].count;
    return a;
  }

  // ---- Restarts: iterations after the restored step were thrown away.
  for (std::size_t i = 1; i < n; ++i) {
    if (!(flag[i] & kSegStart)) continue;
    const Iteration first = T[i];
    const std::int64_t restored = first.step - static_cast<std::int64_t>(first.count);
    for (std::size_t j = i; j-- > 0;) {
      const Iteration prev = T[j];
      if (prev.step <= restored) break;
      flag[j] |= kLost;
      a.steps_lost += prev.count;
      if (flag[j] & kSegStart) break;
    }
    ++a.restarts;
  }

  // ---- Steady step time (median and MAD over kept records).
  std::vector<detail::Weighted> w;
  w.reserve(timed);
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isnan(time[i]) && !(flag[i] & kLost))
      w.push_back({time[i], static_cast<double>(count[i])});
  const Distribution all_dist = detail::distribution(std::move(w), false);
  std::vector<detail::Weighted>().swap(w);
  const double med = all_dist.median;
  const double mad = all_dist.mad;

  // ---- Warm-up: leading records of each segment far from the steady pace (compilation,
  // caches); or the first --warmup iterations.
  for (std::size_t i = 0; i < n; ++i) {
    if (!(flag[i] & kSegStart)) continue;
    std::uint64_t seen = 0;
    const std::int64_t seg_first = T[i].step - static_cast<std::int64_t>(T[i].count);
    for (std::size_t j = i; j < n && (j == i || !(flag[j] & kSegStart)); ++j) {
      if (opt.warmup) {
        if (T[j].step - seg_first > *opt.warmup) break;
        flag[j] |= kWarm;
        continue;
      }
      if (std::isnan(time[j])) continue;
      const double tol = std::max(3.0 * 1.4826 * mad, 0.10 * med);
      const bool far = std::fabs(time[j] - med) > tol;
      if (!far || seen >= 20) break;
      flag[j] |= kWarm;
      ++seen;
    }
  }

  // ---- Stalls: steps slower than median + 3 MAD (at least 1% of the median).
  std::vector<detail::Weighted> steady_w;
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isnan(time[i]) && !(flag[i] & (kLost | kWarm)))
      steady_w.push_back({time[i], static_cast<double>(count[i])});
  if (steady_w.empty()) {  // everything is warm-up: use all
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isnan(time[i]) && !(flag[i] & kLost))
        steady_w.push_back({time[i], static_cast<double>(count[i])});
  }
  a.step_time = detail::distribution(std::move(steady_w));
  std::vector<detail::Weighted>().swap(steady_w);
  const double steady_med = a.step_time.median;
  a.stalls.threshold_s = steady_med + std::max(3.0 * a.step_time.mad, 0.01 * steady_med);

  EventIndex ev;
  for (const auto& e : run.events) {
    if (e.kind == EventKind::kCheckpointSave) ev.checkpoint_steps.insert(e.step);
    if (e.kind == EventKind::kEval) ev.eval_steps.insert(e.step);
  }
  std::vector<std::int64_t> stall_steps;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(time[i]) || (flag[i] & (kLost | kWarm))) continue;
    if (time[i] > a.stalls.threshold_s) {
      flag[i] |= kStall;
      stall_steps.push_back(T[i].step);
    }
  }
  // Do stalls recur every N steps?
  if (stall_steps.size() >= 3) {
    std::map<std::int64_t, int> diffs;
    for (std::size_t i = 1; i < stall_steps.size(); ++i)
      ++diffs[stall_steps[i] - stall_steps[i - 1]];
    auto best = std::max_element(diffs.begin(), diffs.end(),
                                 [](auto& x, auto& y) { return x.second < y.second; });
    if (best->first > 1 && best->second >= 2 &&
        best->second >= static_cast<int>(0.6 * static_cast<double>(stall_steps.size() - 1))) {
      a.stalls.period_steps = best->first;
      for (const char* key : {"save_interval", "eval_interval", "log_interval"}) {
        // The stalls' period is this interval exactly (a multiple would not explain the others).
        if (auto v = run.meta.number(key); v && as_count(*v) == best->first) {
          a.stalls.period_cause = fmt::format("{} {}", key, best->first);
          break;
        }
      }
    }
  }

  // ---- Work per iteration.
  if (any_log_flops) {
    a.flops_from_log = true;
    a.flops_source = "log";
  } else if (r.fpt && (known(r.tokens_default) || [&] {
               for (std::size_t i = 0; i < n; ++i)
                 if (known(detail::tokens_of(T[i], r.seq_len, r.tokens_default))) return true;
               return false;
             }())) {
    a.flops_source = "model";
  } else if (known(r.flops_default)) {
    a.flops_source = "flag";
  } else if (any_reported && known(r.gpus) && [&] {
               // The framework's own count is used only when it is possible on this hardware.
               double sum = 0, tsum = 0;
               for (std::size_t i = 0; i < n; ++i) {
                 const Iteration it = T[i];
                 if (!known(it.reported_flops_per_gpu) || std::isnan(time[i]) ||
                     (flag[i] & (kWarm | kLost)))
                   continue;
                 sum += it.reported_flops_per_gpu * time[i] * count[i];
                 tsum += time[i] * count[i];
               }
               return tsum > 0 && (!known(r.peak) || sum / tsum <= r.peak);
             }()) {
    a.flops_from_framework = true;
    a.flops_source = "framework";
  } else if (auto tf = run.meta.number("framework_total_flops"); tf && known(r.gpus)) {
    std::uint64_t iters = 0;
    for (std::size_t i = 0; i < n; ++i) iters += count[i];
    if (iters > 0) {
      a.default_flops_per_iteration = *tf / static_cast<double>(iters);
      a.flops_source = "framework";
      a.warnings.push_back(
          "model FLOPs are the framework's total_flos (Hugging Face's 6 x params x tokens "
          "estimate); "
          "pass --model for mfu's own count");
    }
  }
  if (a.flops_source.empty()) {
    if (!r.model)
      a.unknowns.push_back(
          "model FLOPs: pass --model PRESET|config.json (or the shape flags), or --flops per step");
    else
      a.unknowns.push_back(
          "tokens per step: pass --tokens-per-step, or --batch with the sequence length");
  }

  // ---- The main pass: split every record's time, and the time between records, into buckets.
  Waterfall wf;
  const bool timeline = all_ts && known(run.first_timestamp_s) && known(run.last_timestamp_s);
  const double P = r.peak, G = r.gpus;
  const bool can_ideal = known(P) && known(G) && !a.flops_source.empty();
  double flops_kept = 0, flops_hw_kept = 0, flops_steady = 0, time_steady = 0, tokens_all = 0,
         tokens_steady = 0;
  double productive = 0;
  std::uint64_t iters_total = 0, iters_steady = 0, iters_warm = 0;
  double warm_time = 0;
  double reported_sum = 0, reported_time = 0, recomputed_sum = 0;
  std::size_t capped = 0, capped_steady = 0, steady_records = 0;
  std::vector<detail::WeightedF> mfu_w;
  // The split of steady steps (stall excess left out), for mfu whatif.
  std::array<double, detail::kBucketCount> step_split{};
  double step_weight = 0;
  const double bubble_frac =
      (known(r.pp) && r.pp > 1 && known(r.micro_batches) && r.micro_batches >= 1)
          ? (r.pp - 1.0) / (r.micro_batches + r.pp - 1.0)
          : 0.0;
  if (known(r.pp) && r.pp > 1 && bubble_frac == 0)
    a.unknowns.push_back(
        "pipeline micro-batches: pass --micro-batches to infer the pipeline bubble");
  const bool fw_counts_recompute =
      r.framework_convention && *r.framework_convention == Convention::kMegatronDeepSpeed;

  // Events in line order, to place them in the gaps between records.
  std::vector<const Event*> events;
  for (const auto& e : run.events)
    if (e.kind != EventKind::kRestart) events.push_back(&e);
  std::sort(events.begin(), events.end(), [](const Event* x, const Event* y) {
    return x->file != y->file ? x->file < y->file : x->line < y->line;
  });
  std::size_t next_event = 0;
  auto events_until = [&](std::uint16_t file, std::uint32_t line) {
    std::vector<const Event*> out;
    while (next_event < events.size() &&
           (events[next_event]->file < file ||
            (events[next_event]->file == file && events[next_event]->line < line))) {
      out.push_back(events[next_event++]);
    }
    return out;
  };
  // Places a gap of `gap` seconds, explained by `evs` where they can.
  auto place_gap = [&](double gap, const std::vector<const Event*>& evs, B fallback,
                       BucketSource fallback_src, std::string_view fallback_what,
                       bool before_first) {
    double timed_events = 0;
    for (const Event* e : evs)
      if (known(e->duration_s)) timed_events += e->duration_s;
    if (!timeline) {
      for (const Event* e : evs)
        if (known(e->duration_s))
          wf.add(bucket_of(e->kind, before_first), e->duration_s, BucketSource::kMeasured,
                 event_what(*e));
      return;
    }
    if (!(gap > 0)) return;
    const double scale = timed_events > gap ? gap / timed_events : 1.0;
    for (const Event* e : evs)
      if (known(e->duration_s))
        wf.add(bucket_of(e->kind, before_first), e->duration_s * scale, BucketSource::kMeasured,
               event_what(*e));
    double rest = gap - timed_events * scale;
    if (rest <= 0) return;
    // An event without a duration in this gap explains it (inferred).
    for (const Event* e : evs) {
      if (!known(e->duration_s) && e->kind != EventKind::kStall) {
        wf.add(bucket_of(e->kind, before_first), rest, BucketSource::kInferred,
               event_what(*e) + " (gap around them)");
        return;
      }
    }
    wf.add(fallback, rest, fallback_src, fallback_what);
  };

  double prev_ts = kUnknown;
  double carry = 0;  // clock time minus step time since the last placed gap
  // Resolution of the log's clock: 1 s when every timestamp is a whole second.
  double ts_res = 0;
  if (timeline) {
    bool whole = true;
    for (std::size_t i = 0; i < n && whole; ++i) {
      const double ts = T[i].timestamp_s;
      whole = !known(ts) || ts == std::floor(ts);
    }
    ts_res = whole ? 1.0 : 0.0;
  }
  bool first_record = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(time[i])) continue;
    const Iteration it = T[i];
    const double c = static_cast<double>(count[i]);
    const double t = time[i];
    double rec_wall = c * t;
    double scale = 1.0;
    // Time before this record: startup (first record), downtime (restart) or a gap.
    const auto evs = events_until(it.file, it.line);
    if (timeline) {
      const double start = it.timestamp_s - rec_wall;
      if (first_record) {
        // The first record's timestamp marks its end; it may begin before the log's first
        // timestamp, and then the wall clock starts with it.
        place_gap(start - run.first_timestamp_s, evs, B::kStartup, BucketSource::kMeasured,
                  "from the first line of the log to the first step", true);
      } else if (flag[i] & kSegStart) {
        place_gap(start - prev_ts, evs, B::kRestart, BucketSource::kInferred,
                  "downtime between the last step and the restart", false);
      } else {
        // Timestamps printed to the second are off by up to a second each, but their errors
        // cancel over a run: carry the difference between the clock and the step times, and
        // call it a gap (or an overrun) only beyond the clock's resolution.
        carry += start - prev_ts;
        if (carry > ts_res) {
          place_gap(carry, evs, B::kIdle, BucketSource::kInferred, "gaps between logged steps",
                    false);
          carry = 0;
        } else {
          place_gap(0, evs, B::kIdle, BucketSource::kInferred, "gaps between logged steps", false);
          if (carry < -ts_res) {
            // The records claim more time than the clock allows: trust the clock.
            const double over = -carry - ts_res;
            scale = rec_wall > over ? (rec_wall - over) / rec_wall : 0.0;
            carry = -ts_res;
          }
        }
      }
      if (first_record || (flag[i] & kSegStart)) {
        carry = 0;
        const double interval = first_record ? rec_wall : it.timestamp_s - prev_ts;
        if (interval < rec_wall) scale = interval > 0 ? interval / rec_wall : 0.0;
      }
      prev_ts = it.timestamp_s;
    } else {
      place_gap(0, evs, B::kOther, BucketSource::kResidual, "", first_record);
    }
    first_record = false;
    const double S = rec_wall * scale;
    iters_total += count[i];

    const double tokens = detail::tokens_of(it, r.seq_len, r.tokens_default);
    double fpi = kUnknown;  // model FLOPs per iteration
    if (a.flops_from_log)
      fpi = known(it.model_flops) ? it.model_flops : kUnknown;
    else if (a.flops_source == "model" && known(tokens))
      fpi = r.fpt->model * tokens;
    else if (a.flops_source == "flag")
      fpi = r.flops_default;
    else if (a.flops_from_framework && known(it.reported_flops_per_gpu))
      fpi = it.reported_flops_per_gpu * t * G;
    else if (a.flops_source == "framework")
      fpi = a.default_flops_per_iteration;

    if (flag[i] & kLost) {
      wf.add(B::kRestart, S, BucketSource::kInferred, "work redone after restarts");
      continue;
    }
    if (known(tokens)) tokens_all += tokens * c;
    if (known(fpi)) {
      flops_kept += fpi * c;
      if (r.fpt && a.flops_source == "model") flops_hw_kept += r.fpt->hardware * tokens * c;
    }

    // Excess over the steady pace: warm-up or stall.
    double base_t = t;
    if (flag[i] & kWarm) {
      iters_warm += count[i];
      warm_time += S;
      const double ex = std::max(0.0, t - steady_med);
      base_t = t - ex;
      wf.add(B::kStartup, c * ex * scale, BucketSource::kInferred,
             "warm-up steps slower than the steady pace");
    } else if (flag[i] & kStall) {
      const double ex = t - steady_med;
      base_t = steady_med;
      const std::int64_t span = static_cast<std::int64_t>(count[i]);
      Stall st{it.step, t, c * ex * scale, it.line, ""};
      if (ev.near(ev.checkpoint_steps, it.step, span)) {
        st.cause = "checkpoint";
        wf.add(B::kCheckpoint, st.excess_s, BucketSource::kInferred,
               "slow steps at checkpoint saves");
        a.stalls.excess_by_bucket["checkpoint"] += st.excess_s;
      } else if (ev.near(ev.eval_steps, it.step, span)) {
        st.cause = "eval";
        wf.add(B::kEval, st.excess_s, BucketSource::kInferred, "slow steps at evaluations");
        a.stalls.excess_by_bucket["eval"] += st.excess_s;
      } else if (a.stalls.period_steps && a.stalls.period_cause.rfind("save_interval", 0) == 0) {
        st.cause = "checkpoint";
        wf.add(B::kCheckpoint, st.excess_s, BucketSource::kInferred,
               "slow steps at the save interval");
        a.stalls.excess_by_bucket["checkpoint"] += st.excess_s;
      } else if (a.stalls.period_steps && a.stalls.period_cause.rfind("eval_interval", 0) == 0) {
        st.cause = "eval";
        wf.add(B::kEval, st.excess_s, BucketSource::kInferred,
               "slow steps at the evaluation interval");
        a.stalls.excess_by_bucket["eval"] += st.excess_s;
      } else {
        wf.add(B::kIdle, st.excess_s, BucketSource::kInferred,
               "stalls (steps slower than median + 3 MAD)");
        a.stalls.excess_by_bucket["idle"] += st.excess_s;
      }
      a.stalls.excess_s += st.excess_s;
      ++a.stalls.count;
      a.stalls.worst.push_back(st);
      if (a.stalls.worst.size() > 64) {
        std::sort(a.stalls.worst.begin(), a.stalls.worst.end(),
                  [](const Stall& x, const Stall& y) { return x.excess_s > y.excess_s; });
        a.stalls.worst.resize(10);
      }
    }
    const double base = c * base_t * scale;
    if (!(flag[i] & kWarm)) ++steady_records;
    if (!(flag[i] & kWarm)) {
      iters_steady += count[i];
      time_steady += S;
      productive += base;
      if (known(fpi)) flops_steady += fpi * c;
      if (known(tokens)) tokens_steady += tokens * c;
      if (known(fpi) && can_ideal)
        mfu_w.push_back({static_cast<float>(fpi / (P * G * t)), static_cast<float>(c)});
      if (known(it.reported_flops_per_gpu)) {
        reported_sum += it.reported_flops_per_gpu * c * t;
        reported_time += c * t;
        if (r.framework_fpt && known(tokens) && known(G)) {
          const double per_tok =
              fw_counts_recompute ? r.framework_fpt->hardware : r.framework_fpt->model;
          recomputed_sum += per_tok * tokens * c;
        }
      }
    } else {
      productive += 0;
    }

    // Split the steady part of the record with its timers.
    const double k =
        base / std::max(1e-300, c * t);  // timers are per iteration of the whole record
    auto ph = [&](Phase p) { return known(it.at(p)) ? it.at(p) * c * k : 0.0; };
    double comm = ph(Phase::kComm), data = ph(Phase::kData), opt_t = ph(Phase::kOptimizer);
    double gen = ph(Phase::kGenerate), oth = ph(Phase::kOther), idle_m = ph(Phase::kIdle);
    const bool has_fwdbwd = known(it.at(Phase::kForward)) || known(it.at(Phase::kBackward));
    const bool has_compute = known(it.at(Phase::kCompute));
    const bool has_fb = known(it.at(Phase::kForwardBackward));
    double fwdbwd = has_fwdbwd ? ph(Phase::kForward) + ph(Phase::kBackward) : ph(Phase::kCompute);
    double fb = ph(Phase::kForwardBackward);
    double measured = comm + data + opt_t + gen + oth + idle_m;
    if (measured > base) {  // timers add up to more than the step: trust the step time
      const double f = base / measured;
      comm *= f;
      data *= f;
      opt_t *= f;
      gen *= f;
      oth *= f;
      idle_m *= f;
      measured = base;
    }
    const bool steady_record = !(flag[i] & kWarm);
    if (steady_record) step_weight += c * scale;
    auto split_add = [&](B b, double seconds, BucketSource src, std::string_view what) {
      wf.add(b, seconds, src, what);
      if (steady_record && seconds > 0 && std::isfinite(seconds))
        step_split[static_cast<std::size_t>(b)] += seconds;
    };
    split_add(B::kIdle, idle_m, BucketSource::kMeasured, "idle device time (no kernel running)");
    split_add(B::kComm, comm, BucketSource::kMeasured, "communication timers");
    split_add(B::kIo, data, BucketSource::kMeasured, "data-loader timers");
    split_add(B::kInefficiency, opt_t, BucketSource::kMeasured, "optimizer step (no model FLOPs)");
    split_add(B::kOther, gen, BucketSource::kMeasured, "RLHF generation (not training FLOPs)");
    split_add(B::kOther, oth, BucketSource::kMeasured, "other timed work");
    double region = base - measured;  // compute and whatever no timer covers
    double compute_span = region;     // what the compute timers say, else the whole region
    bool compute_timed = false;
    if (has_fwdbwd || has_compute) {
      compute_span = std::min(region, fwdbwd);
      compute_timed = true;
    } else if (has_fb) {
      compute_span = std::min(region, std::max(0.0, fb - comm - data));
      compute_timed = true;
    }
    double untimed = region - compute_span;
    // Pipeline bubble: (p-1)/(m+p-1) of the forward-backward span (Narayanan et al. 2021,
    // Sec. 2.2).
    if (bubble_frac > 0) {
      const double span = has_fb ? std::min(region + comm + data, fb) : region;
      double bubble = bubble_frac * span;
      const double from_untimed = std::min(bubble, untimed);
      untimed -= from_untimed;
      const double from_compute = std::min(bubble - from_untimed, compute_span);
      compute_span -= from_compute;
      bubble = from_untimed + from_compute;
      split_add(B::kIdle, bubble, BucketSource::kInferred, "pipeline bubble (p-1)/(m+p-1)");
    }
    double ideal = (known(fpi) && can_ideal) ? fpi * c * scale / (P * G) : kUnknown;
    if (known(ideal)) {
      if (ideal > compute_span + untimed + 1e-9 * base) {
        // More model FLOPs than the peak allows in this time: count only what fits, so that the
        // compute bucket and MFU stay one number (and warn).
        ++capped;
        if (!(flag[i] & kWarm)) ++capped_steady;
        const double excess_flops =
            (ideal - (compute_span + untimed)) * P * G / std::max(scale, 1e-300);
        flops_kept -= excess_flops;
        if (!(flag[i] & kWarm)) flops_steady -= excess_flops;
        ideal = compute_span + untimed;
      }
      const double in_compute = std::min(ideal, compute_span);
      split_add(B::kCompute, ideal, BucketSource::kInferred, "model FLOPs at peak");
      if (compute_timed) {
        split_add(B::kInefficiency, compute_span - in_compute, BucketSource::kMeasured,
                  "forward/backward time above the ideal");
        split_add(B::kOther, untimed - (ideal - in_compute), BucketSource::kResidual,
                  "step time no timer covers");
      } else {
        split_add(B::kOther, compute_span + untimed - ideal, BucketSource::kResidual,
                  "rest of the step: compute below peak, exposed communication, data waits or idle "
                  "(no timers in the log)");
      }
    } else {
      // Without FLOPs and peak the compute at peak cannot be separated from the rest.
      if (compute_timed) {
        split_add(B::kCompute, compute_span, BucketSource::kMeasured,
                  "forward/backward timers (peak or FLOPs unknown)");
        split_add(B::kOther, untimed, BucketSource::kResidual, "step time no timer covers");
      } else {
        split_add(B::kOther, compute_span + untimed, BucketSource::kResidual,
                  "step time (FLOPs or peak unknown: compute cannot be separated)");
      }
    }
  }
  // Events after the last record, and the tail of the log.
  {
    std::vector<const Event*> rest;
    while (next_event < events.size()) rest.push_back(events[next_event++]);
    if (timeline) {
      place_gap(run.last_timestamp_s - prev_ts, rest, B::kOther, BucketSource::kMeasured,
                "after the last step (teardown, final save)", false);
    } else {
      place_gap(0, rest, B::kOther, BucketSource::kResidual, "", false);
    }
  }
  if (capped_steady > 0 &&
      static_cast<double>(capped_steady) > 0.01 * static_cast<double>(steady_records)) {
    // Steady steps doing more model FLOPs than the peak allows: the inputs are wrong.
    std::string inputs;
    for (const auto& u : a.used) inputs += fmt::format("{}={} ({}); ", u.name, u.value, u.source);
    throw ImpossibleResult(fmt::format("{} of {} steady records would run above 100% of the peak "
                                       "(MFU above 100% is impossible); "
                                       "inputs: {}",
                                       capped_steady, steady_records, inputs),
                           "check --gpus (all GPUs of the job), the accelerator or --peak (dense, "
                           "per GPU), and the model or "
                           "--tokens-per-step");
  }
  if (capped > 0)
    a.warnings.push_back(
        fmt::format("{} records would run above the peak (model FLOPs at peak take longer than the "
                    "step): check --gpus, --gpu/--peak and the model",
                    capped));

  // ---- Totals and headline numbers.
  a.wall_time_s = wf.total();
  a.gpu_hours = known(G) ? a.wall_time_s * G / 3600.0 : 0;
  a.iterations_total = iters_total;
  a.iterations_analyzed = iters_steady;
  a.warmup_iterations = iters_warm;
  a.warmup_time_s = warm_time;
  if (tokens_all > 0) a.total_tokens = tokens_all;
  if (flops_kept > 0) a.total_model_flops = flops_kept;
  if (tokens_steady > 0 && time_steady > 0) {
    a.tokens_per_s = tokens_steady / time_steady;
    if (known(G)) a.tokens_per_s_per_gpu = *a.tokens_per_s / G;
  }
  if (flops_kept > 0 && known(G) && a.wall_time_s > 0) {
    a.achieved_flops_per_s_per_gpu = flops_kept / (G * a.wall_time_s);
    if (flops_steady > 0 && time_steady > 0)
      a.achieved_flops_per_s_per_gpu_steady = flops_steady / (G * time_steady);
  }
  if (reported_time > 0) {
    a.framework_flops_per_s_per_gpu = reported_sum / reported_time;
    if (known(P)) a.framework_mfu_steady = *a.framework_flops_per_s_per_gpu / P;
    if (recomputed_sum > 0 && known(G)) {
      a.recomputed_flops_per_s_per_gpu = recomputed_sum / (reported_time * G);
      a.framework_agreement =
          *a.recomputed_flops_per_s_per_gpu / *a.framework_flops_per_s_per_gpu - 1.0;
      a.framework_convention = to_string(*r.framework_convention);
    }
  }
  if (can_ideal && a.achieved_flops_per_s_per_gpu) {
    a.mfu = *a.achieved_flops_per_s_per_gpu / P;
    if (a.achieved_flops_per_s_per_gpu_steady)
      a.mfu_steady = *a.achieved_flops_per_s_per_gpu_steady / P;
    if (r.fpt && r.recompute != Recompute::kUnspecified && a.flops_source == "model" &&
        flops_hw_kept > 0)
      a.hfu = flops_hw_kept / (P * G * a.wall_time_s);
  }
  a.mfu_per_iteration = detail::distribution(std::move(mfu_w));
  a.goodput = a.wall_time_s > 0 ? std::optional<double>(productive / a.wall_time_s) : std::nullopt;

  // ---- Guards: a number that cannot be true is an error, never a result.
  if (a.framework_mfu_steady && *a.framework_mfu_steady > 1.0) {
    a.warnings.push_back(fmt::format(
        "the framework's printed FLOP/s ({} per GPU) is {} of the {} peak: impossible, so "
        "its count is ignored",
        format_flop_rate(*a.framework_flops_per_s_per_gpu), format_percent(*a.framework_mfu_steady),
        a.gpu.empty() ? "given" : a.gpu));
  }
  if (a.mfu && *a.mfu > 1.0 + 1e-9) {
    std::string inputs;
    for (const auto& u : a.used) inputs += fmt::format("{}={} ({}); ", u.name, u.value, u.source);
    throw ImpossibleResult(
        fmt::format("MFU would be {}, which is impossible; inputs: {}", format_percent(*a.mfu),
                    inputs),
        "check --gpus (all GPUs of the job), the accelerator or --peak (dense, per GPU), and the "
        "model or --tokens-per-step");
  }
  if (a.mfu_steady && *a.mfu_steady > 1.0 + 1e-9) {
    std::string inputs;
    for (const auto& u : a.used) inputs += fmt::format("{}={} ({}); ", u.name, u.value, u.source);
    throw ImpossibleResult(
        fmt::format("steady-state MFU would be {}, which is impossible; inputs: {}",
                    format_percent(*a.mfu_steady), inputs),
        timeline ? "the log's timestamps leave less time than its step times say: check that they "
                   "come from one "
                   "clock, and --gpus, the accelerator and the model"
                 : "check --gpus (all GPUs of the job), the accelerator or --peak, and the model "
                   "or --tokens-per-step");
  }
  for (std::size_t b = 0; b < detail::kBucketCount; ++b) {
    if (wf.seconds(static_cast<B>(b)) < -1e-9)
      throw ImpossibleResult("a lost-time bucket came out negative");
  }

  a.buckets = wf.buckets(a.wall_time_s, G);
  if (step_weight > 0) {
    a.steady_step_count = step_weight;
    for (std::size_t b = 0; b < detail::kBucketCount; ++b)
      if (step_split[b] > 0) a.steady_step_split_s[kBucketNames[b]] = step_split[b] / step_weight;
  }
  if (!can_ideal) {
    for (auto& b : a.buckets)
      if (b.name == "compute") b.label = "compute (peak or FLOPs unknown)";
  }
  double sum = 0;
  for (const auto& b : a.buckets) sum += b.seconds;
  if (std::fabs(sum - a.wall_time_s) > 1e-6 * std::max(1.0, a.wall_time_s))
    throw ImpossibleResult(
        fmt::format("the buckets add up to {} s, not the wall time {} s", sum, a.wall_time_s));

  // ---- Cost, energy and the fixes worth most.
  for (auto& b : a.buckets) {
    if (opt.price_per_gpu_hour && known(G)) b.cost = b.gpu_hours * *opt.price_per_gpu_hour;
    if (a.tdp_w && known(G)) b.energy_kwh = b.gpu_hours * *a.tdp_w / 1000.0;
    if (a.mfu && b.name != "compute" && b.seconds < a.wall_time_s)
      b.mfu_gain = *a.mfu * a.wall_time_s / (a.wall_time_s - b.seconds) - *a.mfu;
  }
  if (opt.price_per_gpu_hour && known(G)) a.total_cost = a.gpu_hours * *opt.price_per_gpu_hour;
  if (a.tdp_w && known(G)) a.total_energy_kwh = a.gpu_hours * *a.tdp_w / 1000.0;
  std::vector<const Bucket*> avoidable;
  for (const auto& b : a.buckets)
    if (b.name != "compute" && b.seconds > 1e-6 * a.wall_time_s) avoidable.push_back(&b);
  std::sort(avoidable.begin(), avoidable.end(),
            [](const Bucket* x, const Bucket* y) { return x->seconds > y->seconds; });
  for (std::size_t i = 0; i < avoidable.size() && a.fixes.size() < 3; ++i) {
    const Bucket* b = avoidable[i];
    a.fixes.push_back(Fix{b->name, b->label, b->seconds, b->mfu_gain, advice_for(b->name)});
  }

  // ---- Stalls: keep the ten slowest.
  std::sort(a.stalls.worst.begin(), a.stalls.worst.end(),
            [](const Stall& x, const Stall& y) { return x.excess_s > y.excess_s; });
  if (a.stalls.worst.size() > 10) a.stalls.worst.resize(10);

  // ---- Steady step-time sample.
  {
    std::vector<double> steady;
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isnan(time[i]) && !(flag[i] & (kWarm | kLost))) steady.push_back(time[i]);
    const std::size_t stride = std::max<std::size_t>(1, (steady.size() + 4999) / 5000);
    for (std::size_t i = 0; i < steady.size(); i += stride)
      a.steady_step_times_s.push_back(steady[i]);
  }

  // ---- Series for charts: at most ~2000 points, keeping each block's slowest record.
  const std::size_t stride = std::max<std::size_t>(1, (n + 1999) / 2000);
  for (std::size_t b0 = 0; b0 < n; b0 += stride) {
    std::size_t pick = b0;
    for (std::size_t j = b0; j < std::min(n, b0 + stride); ++j)
      if (!std::isnan(time[j]) && (std::isnan(time[pick]) || time[j] > time[pick])) pick = j;
    if (std::isnan(time[pick])) continue;
    const Iteration it = T[pick];
    SeriesPoint p;
    p.step = it.step;
    p.time_s = time[pick];
    p.mfu = iteration_mfu(a, it);
    p.stall = flag[pick] & kStall;
    p.warmup = flag[pick] & kWarm;
    a.series.push_back(p);
  }

  // Profiler traces: per-rank detail, and HFU from the FLOPs the profiler counted.
  a.trace = run.trace;
  if (run.trace) {
    double flops = 0;
    std::size_t with = 0;
    for (const auto& rk : run.trace->ranks)
      if (rk.has_flops) {
        flops += rk.flops;
        ++with;
      }
    if (with > 0 && known(G)) {
      // Ranks without a trace are assumed to do the same work as the mean traced rank.
      a.trace_executed_flops = flops / static_cast<double>(with) * G;
      if (known(P) && a.wall_time_s > 0) {
        a.hfu = *a.trace_executed_flops / (P * G * a.wall_time_s);
        if (*a.hfu > 1.0 + 1e-9)
          throw ImpossibleResult(fmt::format("HFU from the profiler's FLOP counts would be {}",
                                             format_percent(*a.hfu)),
                                 "check --gpu/--peak and --gpus");
      }
    }
    for (const auto& msg : run.trace->warnings) a.warnings.push_back(msg);
  }
  if (run.timing == TimingKind::kSampled)
    a.warnings.push_back(
        "the log times one iteration per line: the iterations between lines are assumed to take as "
        "long (wall time is estimated)");
  if (!timeline && known(run.first_timestamp_s) && !all_ts)
    a.unknowns.push_back("startup and gaps between steps: the iteration lines carry no timestamps");
  if (run.truncated) a.warnings.push_back("the input is cut off: the last records may be missing");
  if (run.malformed_lines > 0)
    a.warnings.push_back(
        fmt::format("{} malformed record lines were skipped", run.malformed_lines));
  return a;
}

}  // namespace mfu
