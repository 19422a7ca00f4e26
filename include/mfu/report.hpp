#pragma once
/// Renderers: pure functions of a finished result and an output stream, one source file per
/// format under src/report/. JSON carries `schema_version`, ratios in 0..1 and units in key
/// names; percentages appear only on screen.

#include <ostream>
#include <string>
#include <string_view>

#include "mfu/analysis.hpp"
#include "mfu/calc.hpp"
#include "mfu/fleet.hpp"
#include "mfu/gpu.hpp"
#include "mfu/model.hpp"
#include "mfu/run.hpp"
#include "mfu/scheduler.hpp"
#include "mfu/summary.hpp"
#include "mfu/whatif.hpp"

namespace mfu {

/// kSummary: one JSON line of additive quantities per job (mfu analyze; summary.hpp).
enum class OutputFormat { kText, kJson, kMarkdown, kCsv, kHtml, kSummary };

/// "text", "json", "markdown"/"md", "csv", "html", "summary". Throws mfu::Error otherwise.
[[nodiscard]] OutputFormat parse_output_format(std::string_view name);

struct RenderOptions {
  bool color = false;          ///< ANSI colour (text only); the CLI sets it for terminals
  bool per_iteration = false;  ///< include per-iteration records (json)
  int width = 100;             ///< terminal width (text wraps to it)
  /// For the HTML report's footer: the command that made it and when (the CLI fills both;
  /// empty ones are left out).
  std::string command_line;
  std::string generated_at;
};

/// Version of every JSON document mfu writes.
inline constexpr int kJsonSchemaVersion = 1;

void render_calc(const CalcResult& result, OutputFormat format, const RenderOptions& options,
                 std::ostream& out);
void render_gpu_list(const GpuDatabase& db, OutputFormat format, std::ostream& out);
void render_gpu(const GpuSpec& spec, const std::string& note, OutputFormat format,
                std::ostream& out);
void render_models(const ModelCatalog& catalog, OutputFormat format, std::ostream& out);
/// One model (`mfu models NAME`): its shape, parameter counts and FLOPs per token under every
/// convention.
void render_model(const ModelShape& model, OutputFormat format, std::ostream& out);
/// `mfu analyze`: the headline, the waterfall, stalls, fixes; `run` supplies per-iteration rows
/// (csv, json with per_iteration, html charts use the analysis' series).
void render_analysis(const Analysis& analysis, const Run& run, OutputFormat format,
                     const RenderOptions& options, std::ostream& out);

/// `mfu whatif RUN`: measured and projected side by side, one line per change.
void render_projection(const Projection& projection, const std::string& title, OutputFormat format,
                       std::ostream& out);
/// `mfu whatif --model ...`: the analytical step-time breakdown and its data-parallel scaling.
void render_estimate(const StepEstimate& estimate, const std::vector<ScalingPoint>& scaling,
                     const std::string& title, OutputFormat format, std::ostream& out);
/// `mfu whatif TRACES --no-stragglers`: the straggler-free step time, per step, and what the
/// late ranks cost; MFU scaled by the step times when `mfu_steady` is known.
void render_no_stragglers(const StragglerProjection& projection,
                          const std::optional<double>& mfu_steady, const std::string& title,
                          OutputFormat format, std::ostream& out);
/// `mfu whatif cluster`: both placements of a job trace.
void render_cluster(const ClusterReport& report, OutputFormat format, std::ostream& out);

/// Job summaries (`mfu merge`, `mfu fleet`): the fleet's MFU, GPU time per bucket, and by
/// accelerator, model and framework; json and summary write the summary's line.
void render_summary(const JobSummary& summary, OutputFormat format, std::ostream& out);

/// `mfu fleet`: the scheduler's share (when `share` is given, of `cluster_gpus`), the fleet's
/// summary, the worst jobs by lost GPU time and by MFU, the jobs not analysed; csv: a row per
/// job; json: all of it; summary: the fleet's line; html: a self-contained page of it all
/// (`options` gives its footer). Throws mfu::Error when no job was analysed.
void render_fleet(const FleetReport& fleet, const SchedulerShare* share, int cluster_gpus,
                  OutputFormat format, std::ostream& out, const RenderOptions& options = {});

/// `mfu inspect`: format, records, fields, metadata with sources, events, diagnostics.
void render_inspect(const Run& run, OutputFormat format, std::ostream& out);

}  // namespace mfu
