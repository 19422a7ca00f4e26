// mfu::evaluate_gate: thresholds and the baseline comparison behind `mfu check`.
#include "mfu/gate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/waterfall.hpp"
#include "gate/compare.hpp"
#include "gate/statistics.hpp"
#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
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

namespace {

/// The largest avoidable bucket of the steady step (for steady-state gates: startup cannot
/// move them) or of the whole run: where to look when a threshold fails.
std::string steady_worst_bucket(const Analysis& a) {
  std::string best;
  double most = 0;
  for (const auto& [name, seconds] : a.steady_step_split_s)
    if (name != "compute" && seconds > most) {
      most = seconds;
      best = name;
    }
  return best;
}

void add_thresholds(const Analysis& a, const GateOptions& o, GateResult& r) {
  std::string look = o.whole_run_mfu ? worst_bucket(a) : steady_worst_bucket(a);
  if (!o.whole_run_mfu && o.baseline && !o.baseline->steady_step_split_s.empty())
    look = detail::grown_bucket(a, *o.baseline);
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
    r.checks.push_back(at_least(
        "min-tokens-per-sec", a.tokens_per_s, *o.min_tokens_per_s, "tokens/s",
        "tokens/s (steady state)",
        "tokens per step are unknown: give " + input_phrase(Input::kTokensPerStep) + ", or " +
            input_phrase(Input::kBatch) + " with " + input_phrase(Input::kSeqLen),
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
      throw Error(fmt::format("unknown bucket '{}' in a bucket limit", name),
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
}

bool any_threshold(const GateOptions& o) {
  return o.min_mfu || o.max_step_time_s || o.min_tokens_per_s || o.min_goodput ||
         !o.max_bucket.empty() || o.baseline;
}

/// Why a verdict on this run would mean nothing; one rule for every gate.
std::vector<std::string> reasons_not_to_judge(const Analysis& a, const Run& run,
                                              const GateOptions& o) {
  std::vector<std::string> why;
  const std::size_t steady = a.steady_step_times_s.size();
  if (a.iterations_total > 0 && a.warmup_iterations >= a.iterations_total)
    why.push_back("every step of the log is warm-up: there is no steady state to judge");
  else if (a.iterations_total == 0 || steady == 0)
    why.push_back("the log has no timed steady-state step");
  else if (steady < o.min_steady_steps)
    why.push_back(fmt::format(
        "only {} steady-state step records ({} needed to judge a run; the minimum is a setting)",
        steady, o.min_steady_steps));
  if (!a.gpu_count_conflict.empty()) why.push_back(a.gpu_count_conflict);
  if (run.truncated && !o.allow_partial)
    why.push_back(
        "the input is cut off (a truncated or corrupt file, or a job that died): judging a "
        "partial run needs it said explicitly (allow-partial)");
  const double lines =
      static_cast<double>(run.malformed_lines) + static_cast<double>(run.iterations.size());
  if (lines > 0 && static_cast<double>(run.malformed_lines) > o.max_unreadable_share * lines)
    why.push_back(fmt::format("{} of {} record lines could not be read (more than {})",
                              run.malformed_lines, static_cast<std::size_t>(lines),
                              format_percent(o.max_unreadable_share, 0)));
  return why;
}

}  // namespace

GateResult evaluate_gate(const Analysis& a, const Run& run, const GateOptions& o) {
  if (!any_threshold(o))
    throw Error("no threshold and no baseline: there is nothing to check",
                "give a threshold (min-mfu, max-step-time, min-tokens-per-sec, max-bucket, "
                "min-goodput) or a baseline report");
  GateResult r;
  r.cannot_judge = reasons_not_to_judge(a, run, o);
  add_thresholds(a, o, r);
  if (o.baseline)
    for (auto& c : detail::compare_with_baseline(a, o, r)) r.checks.push_back(std::move(c));
  // A gated quantity that is unknown cannot be judged either: neither pass nor fail.
  for (const auto& c : r.checks)
    if (!known(c.measured)) r.cannot_judge.push_back(fmt::format("{}: {}", c.name, c.message));
  r.passed = r.cannot_judge.empty();
  for (const auto& c : r.checks) r.passed = r.passed && c.passed;
  return r;
}

}  // namespace mfu
