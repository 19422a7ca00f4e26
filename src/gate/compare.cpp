// `mfu check --baseline`: the levels a user gates on (steady MFU, tokens/s per GPU; the step
// time only when neither is known for both runs) compared with their per-step noise, after
// checking that the two runs can be compared at all.
#include "gate/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "gate/statistics.hpp"
#include "mfu/error.hpp"
#include "mfu/units.hpp"

namespace mfu::detail {
namespace {

/// Fewer per-step values than this in either run leave the noise unestimated.
constexpr std::size_t kMinSample = 5;

bool allowed(const GateOptions& o, const char* what) {
  return std::find(o.allow_different.begin(), o.allow_different.end(), what) !=
         o.allow_different.end();
}

struct Level {
  std::string name;
  bool higher_is_better;
  double current, baseline;
  const std::vector<double>* current_sample;
  const std::vector<double>* baseline_sample;
  std::string (*show)(double);
  std::string (*show_change)(double);
};

std::string show_percent(double v) {
  return format_percent(v, 2);
}
std::string show_points(double v) {
  return fmt::format("{:+.2f} points", v * 100);
}
std::string show_rate(double v) {
  return format_count(v) + " tokens/s";
}
std::string show_rate_change(double v) {
  return fmt::format("{}{} tokens/s", v < 0 ? "-" : "+", format_count(std::fabs(v)));
}
std::string show_time(double v) {
  return format_duration(v);
}
std::string show_time_change(double v) {
  return fmt::format("{}{}", v < 0 ? "-" : "+", format_duration(std::fabs(v)));
}

/// The drop's interval from the per-step samples: the bootstrap interval of the ratio of
/// medians (current / baseline), applied to the point ratio of the levels.
void noise_interval(const Level& l, double ratio_point, const GateOptions& o, RegressionTest& t) {
  const auto& cur = *l.current_sample;
  const auto& base = *l.baseline_sample;
  if (cur.size() < kMinSample || base.size() < kMinSample) return;
  const auto [lo, hi] = bootstrap_ratio_ci(cur, base, o.alpha, o.seed);
  const double med = median_of(cur) / median_of(base);
  // Ratio of the "better" direction: current/baseline when higher is better, else inverse.
  auto drop_at = [&](double r) {
    const double scaled = ratio_point * (l.higher_is_better ? r / med : med / r);
    return 1.0 - scaled;
  };
  t.ci_low = std::min(drop_at(lo), drop_at(hi));
  t.ci_high = std::max(drop_at(lo), drop_at(hi));
  // A real drop needs both: the interval beyond zero, and the samples shifted the worse way
  // (one-sided Mann-Whitney U on the per-step values).
  t.p_value =
      l.higher_is_better ? mann_whitney_greater(base, cur) : mann_whitney_greater(cur, base);
  t.significant = t.ci_low > 0 && t.p_value < o.alpha;
}

CheckResult compare_level(const Level& l, const GateOptions& o, RegressionTest& t) {
  CheckResult c;
  c.name = fmt::format("baseline {}", l.name);
  c.limit = o.max_regression;
  c.comparison = "<=";
  c.unit = "ratio";
  const double ratio = l.higher_is_better ? l.current / l.baseline : l.baseline / l.current;
  t.metric = l.name;
  t.drop = 1.0 - ratio;
  c.measured = t.drop;
  noise_interval(l, ratio, o, t);
  const bool noise_known = known(t.ci_low);
  const bool over = t.drop > o.max_regression;
  c.passed = !over || (noise_known && !o.strict && !t.significant);
  c.message =
      fmt::format("{}: baseline {}, this run {} ({}, {:+.1f}%); a drop up to {} is allowed", l.name,
                  l.show(l.baseline), l.show(l.current), l.show_change(l.current - l.baseline),
                  (l.current / l.baseline - 1) * 100, format_percent(o.max_regression));
  if (noise_known)
    c.message += fmt::format(
        "; {:.0f}% interval of the drop [{}, {}] from the per-step noise (p = {:.3g})",
        (1 - o.alpha) * 100, format_percent(t.ci_low, 1), format_percent(t.ci_high, 1), t.p_value);
  else
    c.message += "; no per-step sample in both runs, so no noise estimate: the point values decide";
  if (over && c.passed) c.message += "; within the noise (strict mode would fail it)";
  return c;
}

/// Each bucket limited by the user is also compared with the baseline's share of it (a point
/// comparison: the reports keep no per-step sample of the shares). A share the baseline did
/// not have (0) cannot grow by a ratio and is left to the limit itself.
void bucket_levels(const Analysis& a, const Baseline& b, const GateOptions& o,
                   std::vector<Level>& out) {
  static const std::vector<double> kNoSample;
  for (const auto& entry : o.max_bucket) {
    const std::string& name = entry.first;
    const Bucket* cur = a.bucket(name);
    auto base = b.bucket_share.find(name);
    if (cur == nullptr || base == b.bucket_share.end() || !(base->second > 0)) continue;
    out.push_back({"share of " + name, false, cur->fraction, base->second, &kNoSample, &kNoSample,
                   show_percent, show_points});
  }
}

std::vector<Level> levels(const Analysis& a, const Baseline& b) {
  std::vector<Level> out;
  if (a.mfu_steady && b.mfu_steady)
    out.push_back({"MFU (steady)", true, *a.mfu_steady, *b.mfu_steady, &a.steady_mfu_sample,
                   &b.mfu_sample, show_percent, show_points});
  std::optional<double> base_tps = b.tokens_per_s_per_gpu;
  if (!base_tps && b.tokens_per_s && b.gpus) base_tps = *b.tokens_per_s / *b.gpus;
  if (a.tokens_per_s_per_gpu && base_tps)
    out.push_back({"tokens/s per GPU", true, *a.tokens_per_s_per_gpu, *base_tps,
                   &a.steady_tokens_per_s_per_gpu_sample, &b.tokens_per_s_per_gpu_sample, show_rate,
                   show_rate_change});
  // The step time says something only at the same work per step: it is the fallback when
  // neither level is known for both runs.
  if (out.empty() && known(a.step_time.median) && b.step_time_median_s)
    out.push_back({"step time", false, a.step_time.median, *b.step_time_median_s,
                   &a.steady_step_times_s, &b.step_times_s, show_time, show_time_change});
  return out;
}

}  // namespace

/// With a baseline that keeps its steady split: the bucket whose seconds per steady step grew
/// the most against it (empty when none grew).
std::string grown_bucket(const Analysis& a, const Baseline& b) {
  std::string best;
  double most = 0;
  for (const auto& [name, seconds] : a.steady_step_split_s) {
    if (name == "compute") continue;
    auto base = b.steady_step_split_s.find(name);
    const double grew = seconds - (base == b.steady_step_split_s.end() ? 0.0 : base->second);
    if (grew > most) {
      most = grew;
      best = name;
    }
  }
  return best;
}

void check_comparable(const Analysis& a, const Baseline& b, const GateOptions& o,
                      std::vector<std::string>& notes) {
  std::vector<std::string> differ;
  auto note = [&](const char* what, const std::string& text) {
    if (allowed(o, what))
      notes.push_back(fmt::format("the baseline differs in {} (allowed): {}", what, text));
    else
      differ.push_back(fmt::format("{} ({})", what, text));
  };
  if (!b.gpu.empty() && !a.gpu.empty() && b.gpu != a.gpu)
    note("gpu", fmt::format("{} in the baseline, {} here", b.gpu, a.gpu));
  if (b.gpus && known(a.gpus) && *b.gpus != a.gpus)
    note("gpus",
         fmt::format("{} in the baseline, {} here", format_number(*b.gpus), format_number(a.gpus)));
  if (b.model_flops_per_token && known(a.model_flops_per_token) &&
      std::fabs(*b.model_flops_per_token / a.model_flops_per_token - 1) > 1e-6)
    note("model", fmt::format("{} FLOPs per token in the baseline, {} here",
                              format_flops(*b.model_flops_per_token),
                              format_flops(a.model_flops_per_token)));
  if (!b.convention.empty() && !a.convention.empty() && b.convention != a.convention)
    note("convention", fmt::format("{} in the baseline, {} here", b.convention, a.convention));
  if (!b.dtype.empty() && !a.dtype.empty() && b.dtype != a.dtype)
    note("dtype", fmt::format("{} in the baseline, {} here", b.dtype, a.dtype));
  if (differ.empty()) return;
  const std::string list = fmt::format("{}", fmt::join(differ, "; "));
  throw Error(fmt::format("the baseline '{}' is not comparable with this run: {}", b.path, list),
              "compare runs of the same hardware, model and counting, or name the intended "
              "differences (allow-different: gpu, gpus, model, convention, dtype)");
}

std::vector<CheckResult> compare_with_baseline(const Analysis& a, const GateOptions& o,
                                               GateResult& r) {
  const Baseline& b = *o.baseline;
  check_comparable(a, b, o, r.notes);
  std::vector<CheckResult> out;
  std::vector<Level> ls = levels(a, b);
  if (!ls.empty()) bucket_levels(a, b, o, ls);
  if (ls.empty()) {
    r.cannot_judge.push_back(
        "the baseline and this run share no level to compare (steady MFU, tokens/s per GPU or "
        "step time)");
    return out;
  }
  const std::string grew = grown_bucket(a, b);
  for (const Level& l : ls) {
    RegressionTest t;
    CheckResult c = compare_level(l, o, t);
    if (!c.passed && !grew.empty()) {
      c.bucket = grew;
      c.message += fmt::format("; look at '{}', which grew the most per steady step", grew);
    }
    out.push_back(std::move(c));
    if (!r.regression) r.regression = t;
  }
  return out;
}

}  // namespace mfu::detail
