#pragma once
// Resolution of what an analysis needs (hardware, model, work per iteration) from the run's
// metadata and the user's flags. Flags win; every value remembers where it came from.

#include <optional>
#include <string>
#include <vector>

#include "mfu/analysis.hpp"

namespace mfu::detail {

struct Resolved {
  const GpuSpec* spec = nullptr;
  std::string dtype;
  double peak = kUnknown;
  double peak_share = 1;  ///< a MIG slice's share of the part's peak
  double gpus = kUnknown;
  /// GPUs whose work a record's tokens and FLOPs count: the GPU count, or 1 when the log's
  /// tokens are per GPU and the count is unknown (per-GPU analysis).
  double work_gpus = kUnknown;
  double tokens_scale = 1;  ///< a record's own tokens -> all GPUs' (Iteration::tokens)
  bool per_gpu = false;
  std::optional<ModelShape> model;
  std::optional<FlopsPerToken> fpt;
  Convention convention = Convention::kPalm;
  Recompute recompute = Recompute::kUnspecified;
  double seq_len = kUnknown;
  double tokens_default = kUnknown;  ///< per iteration, global
  double flops_default = kUnknown;   ///< per iteration from --flops
  double pp = kUnknown;
  double micro_batches = kUnknown;
  // The framework's own FLOP count, to compare against.
  std::optional<Convention> framework_convention;
  std::optional<FlopsPerToken> framework_fpt;
  std::string framework_note;
  /// Why the framework's count would differ from mfu's, where the inputs show it ("its N
  /// leaves out the tied output projection"); empty when nothing explains a difference.
  std::string framework_cause;
  std::vector<InputValue> used;
  std::vector<std::string> unknowns;
  std::vector<std::string> warnings;
  /// More ranks print step records than the GPU count the log states (empty when they agree).
  std::string gpu_count_conflict;
};

[[nodiscard]] Resolved resolve_inputs(const Run& run, const AnalyzeOptions& opt,
                                      const GpuDatabase& db);
/// The analysis before its stages: the inputs `r` resolved, with their sources, unknowns and
/// warnings (analyze.cpp; the stage benchmarks start from it too).
[[nodiscard]] Analysis resolved_analysis(const Run& run, const Resolved& r);

/// Tokens of one iteration of record `it` (record field times `scale`, samples x seq_len, or
/// the default).
[[nodiscard]] double tokens_of(const Iteration& it, double seq_len, double tokens_default,
                               double scale = 1);

}  // namespace mfu::detail
