#pragma once
/// `mfu check`: a CI gate over an analysis. Thresholds on MFU, step time, tokens/s, goodput and
/// any waterfall bucket, and a noise-aware comparison with a baseline report saved by
/// `mfu analyze --output json`.
///
/// **Example**:
///   mfu::GateOptions g;
///   g.min_mfu = 0.40;
///   mfu::GateResult r = mfu::evaluate_gate(analysis, g);
///   r.passed;   // false when any check failed

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "mfu/analysis.hpp"
#include "mfu/report.hpp"

namespace mfu {

/// What `mfu check` needs from a baseline report.
struct Baseline {
  std::string path;
  std::optional<double> mfu_steady;
  std::optional<double> mfu;
  std::optional<double> tokens_per_s;
  std::optional<double> tokens_per_s_per_gpu;
  std::optional<double> step_time_median_s;
  std::optional<double> model_flops_per_token;
  std::optional<double> gpus;
  std::string gpu;
  std::string dtype;
  std::string convention;
  std::vector<double> step_times_s;  ///< steady step-time sample
  std::vector<double> mfu_sample;    ///< steady per-record MFU sample
  std::vector<double> tokens_per_s_per_gpu_sample;
  std::map<std::string, double> bucket_share;         ///< bucket -> fraction of the wall time
  std::map<std::string, double> steady_step_split_s;  ///< bucket -> seconds per steady step
};

/// Reads a report written by `mfu analyze --output json`. Throws mfu::Error naming the file.
[[nodiscard]] Baseline load_baseline(const std::string& path);
[[nodiscard]] Baseline parse_baseline(std::string_view json_text, const std::string& origin);

struct GateOptions {
  std::optional<double> min_mfu;          ///< 0..1
  bool whole_run_mfu = false;             ///< gate the whole-run MFU instead of the steady state
  std::optional<double> max_step_time_s;  ///< median steady step
  std::optional<double> min_tokens_per_s;
  std::optional<double> min_goodput;
  std::map<std::string, double> max_bucket;  ///< bucket name -> largest fraction of wall time
  std::optional<Baseline> baseline;
  double max_regression = 0.05;  ///< relative MFU (or throughput) drop allowed against the baseline
  /// Differences from the baseline that are intended: "gpu", "gpus", "model", "convention",
  /// "dtype". Any other difference makes the runs incomparable (mfu::Error).
  std::vector<std::string> allow_different;
  bool allow_partial = false;          ///< judge a truncated input instead of refusing it
  double max_unreadable_share = 0.10;  ///< more record lines unreadable than this: no verdict
  bool strict = false;                 ///< fail on the point estimate even inside the noise
  std::size_t min_steady_steps = 5;    ///< fewer steady records than this never pass
  double alpha = 0.05;                 ///< significance of the regression tests
  std::uint64_t seed = 20260101;       ///< bootstrap seed (reproducible verdicts)
};

struct CheckResult {
  std::string name;  ///< "min-mfu", "max-bucket comm", "regression", ...
  bool passed = false;
  double measured = kUnknown;
  double limit = kUnknown;
  std::string comparison;  ///< ">=" or "<="
  std::string unit;        ///< "ratio", "s", "tokens/s"
  std::string message;     ///< one line for people
  std::string bucket;      ///< the waterfall bucket to look at
};

/// The noise model of a baseline comparison.
struct RegressionTest {
  double drop = kUnknown;    ///< point estimate of the relative MFU (or throughput) drop
  double ci_low = kUnknown;  ///< bootstrap confidence interval of the drop
  double ci_high = kUnknown;
  double p_value = kUnknown;  ///< one-sided Mann-Whitney U: current steps slower than baseline
  bool significant = false;
  std::string metric;  ///< "MFU" or "throughput"
};

struct GateResult {
  bool passed = true;
  /// Why the run cannot be judged (no steady steps, the gated quantity unknown, a truncated or
  /// mostly unreadable input): a verdict would mean nothing, so the gate neither passes nor
  /// fails (the CLI exits 2).
  std::vector<std::string> cannot_judge;
  std::vector<CheckResult> checks;
  std::optional<RegressionTest> regression;
  std::vector<std::string> notes;
};

/// Evaluates every threshold given and the baseline comparison. A run that cannot be judged
/// (too few steady steps, only warm-up, the gated quantity unknown, a truncated or mostly
/// unreadable input) gets `cannot_judge` reasons and never passes. Throws mfu::Error when no
/// threshold or baseline is given, or when the baseline is not comparable with the run.
[[nodiscard]] GateResult evaluate_gate(const Analysis& analysis, const Run& run,
                                       const GateOptions& options);

/// One-sided Mann-Whitney U test that `a` tends to be larger than `b` (normal approximation
/// with tie correction). Returns the p-value.
[[nodiscard]] double mann_whitney_greater(const std::vector<double>& a,
                                          const std::vector<double>& b);

/// Renders the verdict (text, json, markdown) and the JUnit XML.
void render_gate(const GateResult& result, const Analysis& analysis, OutputFormat format,
                 bool color, std::ostream& out);
void render_junit(const GateResult& result, const Analysis& analysis, std::ostream& out);
/// The verdict and the run's whole report on one HTML page; the baseline's steady step times,
/// when one is given, drawn over the run's (its median on the step-time chart, its histogram
/// over the run's).
void render_gate_html(const GateResult& result, const Analysis& analysis, const Baseline* baseline,
                      const RenderOptions& options, std::ostream& out);
/// "::error title=...::message" lines for GitHub Actions.
void render_github_annotations(const GateResult& result, std::ostream& out);

/// Settings files: `mfu.toml` (key = value, [sections] ignored, strings, numbers, booleans,
/// arrays of strings) or `.mfu.json` ({"key": value}). Keys are the long flag names
/// (min-mfu, gpu, max-bucket, ...). Throws mfu::Error with the file and line of a bad entry.
[[nodiscard]] std::map<std::string, std::vector<std::string>> load_settings(
    const std::string& path);

}  // namespace mfu
