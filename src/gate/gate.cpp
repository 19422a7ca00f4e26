// mfu::evaluate_gate: thresholds and the baseline comparison behind `mfu check`.
#include "mfu/gate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/waterfall.hpp"
#include "gate/statistics.hpp"
#include "mfu/error.hpp"
#include "mfu/units.hpp"

namespace mfu {
namespace {

CheckResult at_least(const std::string& name, std::optional<double> measured, double limit,
                     const std::string& unit, const std::string& what,
                     const std::string& missing_hint, const std::string& bucket,
                     std::string (*fmt_value)(double)) {
  CheckResult c;
  c.name = name;
  c.limit = limit;
  c.comparison = ">=";
  c.unit = unit;
  c.bucket = bucket;
  if (!measured) {
    c.passed = false;
    c.message = fmt::format("{} is unknown, so it cannot be shown to be at least {}: {}", what,
                            fmt_value(limit), missing_hint);
    return c;
  }
  c.measured = *measured;
  c.passed = *measured >= limit;
  c.message = fmt::format("{} {} {} {}", what, fmt_value(*measured), c.passed ? ">=" : "<",
                          fmt_value(limit));
  if (!c.passed && !bucket.empty()) c.message += fmt::format("; look at '{}'", bucket);
  return c;
}

std::string pct(double v) {
  return format_percent(v, 2);
}
std::string dur(double v) {
  return format_duration(v);
}
std::string rate(double v) {
  return format_count(v) + " tokens/s";
}

/// The largest avoidable bucket: where to look when a throughput threshold fails.
std::string worst_bucket(const Analysis& a) {
  const Bucket* w = nullptr;
  for (const auto& b : a.buckets)
    if (b.name != "compute" && (w == nullptr || b.seconds > w->seconds)) w = &b;
  return w && w->seconds > 0 ? w->name : std::string();
}

}  // namespace

GateResult evaluate_gate(const Analysis& a, const Run& run, const GateOptions& o) {
  (void)run;
  GateResult r;
  const std::string look = worst_bucket(a);
  const std::size_t steady = a.steady_step_times_s.size();
  if (steady < o.min_steady_steps) {
    CheckResult c;
    c.name = "enough-steps";
    c.passed = false;
    c.measured = static_cast<double>(steady);
    c.limit = static_cast<double>(o.min_steady_steps);
    c.comparison = ">=";
    c.unit = "records";
    c.message = fmt::format(
        "only {} steady-state step records ({} needed to judge a run): a run too short to "
        "measure never passes",
        steady, o.min_steady_steps);
    r.checks.push_back(c);
  }
  if (o.min_mfu) {
    const std::optional<double> m = o.whole_run_mfu ? a.mfu : a.mfu_steady;
    r.checks.push_back(at_least(
        "min-mfu", m, *o.min_mfu, "ratio",
        o.whole_run_mfu ? "MFU (whole run)" : "MFU (steady state)",
        a.unknowns.empty() ? "the model FLOPs or the peak are unknown" : a.unknowns.front(), look,
        pct));
  }
  if (o.max_step_time_s) {
    CheckResult c;
    c.name = "max-step-time";
    c.limit = *o.max_step_time_s;
    c.comparison = "<=";
    c.unit = "s";
    c.bucket = look;
    if (!known(a.step_time.median)) {
      c.message = "the median step time is unknown";
    } else {
      c.measured = a.step_time.median;
      c.passed = c.measured <= c.limit;
      c.message = fmt::format("median step time {} {} {}", dur(c.measured), c.passed ? "<=" : ">",
                              dur(c.limit));
      if (!c.passed && !look.empty()) c.message += fmt::format("; look at '{}'", look);
    }
    r.checks.push_back(c);
  }
  if (o.min_tokens_per_s)
    r.checks.push_back(
        at_least("min-tokens-per-sec", a.tokens_per_s, *o.min_tokens_per_s, "tokens/s",
                 "tokens/s (steady state)",
                 "tokens per step are unknown: pass --tokens-per-step or --batch with --seq-len",
                 look, rate));
  if (o.min_goodput)
    r.checks.push_back(at_least("min-goodput", a.goodput, *o.min_goodput, "ratio", "goodput",
                                "no timed steps", look, pct));
  for (const auto& [name, limit] : o.max_bucket) {
    CheckResult c;
    c.name = "max-bucket " + name;
    c.limit = limit;
    c.comparison = "<=";
    c.unit = "ratio";
    c.bucket = name;
    const Bucket* b = a.bucket(name);
    if (b == nullptr) {
      throw Error(fmt::format("unknown bucket '{}' in --max-bucket", name),
                  "buckets: compute, compute_inefficiency, comm, io, idle, checkpoint, restart, "
                  "startup, eval, other");
    }
    c.measured = b->fraction;
    c.passed = b->fraction <= limit;
    c.message = fmt::format("{} takes {} of the wall time {} {} ({})", b->label, pct(b->fraction),
                            c.passed ? "<=" : ">", pct(limit), to_string(b->source));
    if (!c.passed && b->source == BucketSource::kResidual)
      c.message += "; it is residual time, so the log's timers do not say more";
    r.checks.push_back(c);
  }
  if (o.baseline) {
    const Baseline& base = *o.baseline;
    CheckResult c;
    c.name = "max-regression";
    c.limit = o.max_regression;
    c.comparison = "<=";
    c.unit = "ratio";
    c.bucket = look;
    RegressionTest t;
    // The metric: MFU when both runs have it, else throughput, else step time (same work assumed).
    double ratio_point = kUnknown;  // current / baseline of the metric (higher is better)
    if (a.mfu_steady && base.mfu_steady) {
      t.metric = "MFU";
      ratio_point = *a.mfu_steady / *base.mfu_steady;
    } else if (a.tokens_per_s && base.tokens_per_s) {
      t.metric = "throughput";
      ratio_point = *a.tokens_per_s / *base.tokens_per_s;
    } else if (known(a.step_time.median) && base.step_time_median_s) {
      t.metric = "step time";
      ratio_point = *base.step_time_median_s / a.step_time.median;
      r.notes.push_back(
          "neither MFU nor tokens/s is known for both runs: the comparison assumes the same work "
          "per "
          "step and compares step times");
    }
    if (base.gpus && known(a.gpus) && *base.gpus != a.gpus)
      r.notes.push_back(fmt::format("the baseline ran on {} GPUs, this run on {}",
                                    format_number(*base.gpus), format_number(a.gpus)));
    if (!known(ratio_point)) {
      c.message =
          "the baseline and this run share no comparable metric (MFU, tokens/s or step time)";
    } else {
      t.drop = 1.0 - ratio_point;
      c.measured = t.drop;
      const auto& cur = a.steady_step_times_s;
      const auto& bs = base.step_times_s;
      if (cur.size() >= 3 && bs.size() >= 3) {
        // Noise: the spread of both runs' step times. The metric moves inversely with the
        // median step time at fixed work per step.
        t.p_value = mann_whitney_greater(cur, bs);
        const auto [lo, hi] = detail::bootstrap_ratio_ci(cur, bs, o.alpha, o.seed);
        const double med_ratio = detail::median_of(cur) / detail::median_of(bs);
        // drop = 1 - ratio_point * med_ratio / ratio_b  for a resampled median ratio ratio_b.
        t.ci_low = 1.0 - ratio_point * med_ratio / lo;
        t.ci_high = 1.0 - ratio_point * med_ratio / hi;
        if (t.ci_low > t.ci_high) std::swap(t.ci_low, t.ci_high);
        t.significant = t.p_value < o.alpha && t.ci_low > 0;
      } else {
        r.notes.push_back("too few step times in the baseline or this run for a noise estimate");
      }
      const bool over = t.drop > o.max_regression;
      if (!over) {
        c.passed = true;
        const double change = std::fabs(t.drop) < 5e-4 ? 0.0 : -t.drop * 100;
        c.message =
            fmt::format("{} changed {:+.1f}% against the baseline (a drop up to {} is allowed)",
                        t.metric, change, pct(o.max_regression));
      } else if (o.strict || t.significant) {
        c.passed = false;
        c.message = fmt::format(
            "{} dropped {} against the baseline (allowed {}){}", t.metric, pct(t.drop),
            pct(o.max_regression),
            known(t.p_value)
                ? fmt::format("; beyond the noise: p = {:.3g}, {:.0f}% CI of the drop "
                              "[{}, {}]",
                              t.p_value, (1 - o.alpha) * 100, pct(t.ci_low), pct(t.ci_high))
                : std::string());
        if (!look.empty()) c.message += fmt::format("; look at '{}'", look);
      } else {
        c.passed = true;
        c.message = fmt::format(
            "{} dropped {} against the baseline (allowed {}) but within the noise (p = {:.3g}, "
            "{:.0f}% CI of the drop [{}, {}]); --strict would fail it",
            t.metric, pct(t.drop), pct(o.max_regression), t.p_value, (1 - o.alpha) * 100,
            pct(t.ci_low), pct(t.ci_high));
      }
    }
    r.regression = t;
    r.checks.push_back(c);
  }
  if (r.checks.empty()) {
    r.notes.push_back(
        "no threshold given: pass --min-mfu, --max-step-time, --min-tokens-per-sec, --max-bucket, "
        "--min-goodput or --baseline");
  }
  for (const auto& c : r.checks) r.passed = r.passed && c.passed;
  if (a.mfu && *a.mfu > 1.0) r.passed = false;  // never reached: analyze throws first
  return r;
}

}  // namespace mfu
