#pragma once
// Shared pieces of the analysis renderers: headline lines and per-record columns.

#include <string>
#include <vector>

#include "mfu/analysis.hpp"
#include "mfu/report.hpp"

namespace mfu::detail {

/// "34.0%" or "unknown" for optional ratios.
[[nodiscard]] std::string pct_or(const std::optional<double>& v, const char* fallback = "unknown");

/// One-line summary used by text and markdown: "MFU 34.0% (steady 36.1%) on 16 x h100-sxm".
[[nodiscard]] std::string headline(const Analysis& a);

/// Plain-text lines describing the framework's own FLOP count versus mfu's.
[[nodiscard]] std::vector<std::string> framework_lines(const Analysis& a);

/// The per-rank table of a trace analysis: a heading, one row per rank, then the lines that
/// explain it (overlap, stragglers, collective matching). Only notes when the trace has no
/// device time.
struct TraceTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;
  /// Per step and rank (the first steps when there are many): the step's time, compute,
  /// exposed communication, copies, idle, collective wait, and the collectives it was last at.
  std::vector<std::string> step_header;
  std::vector<std::vector<std::string>> step_rows;
  std::string step_note;  ///< how many steps are shown, when not all
};
[[nodiscard]] TraceTable trace_rows(const Analysis& a);
/// The same as aligned text lines (header first), then the notes.
[[nodiscard]] std::vector<std::string> trace_table(const Analysis& a);

void render_analysis_text(const Analysis& a, const RenderOptions& o, std::ostream& out);
void render_analysis_json(const Analysis& a, const Run& run, const RenderOptions& o,
                          std::ostream& out);
void render_analysis_markdown(const Analysis& a, std::ostream& out);
void render_analysis_csv(const Analysis& a, const Run& run, std::ostream& out);
void render_analysis_html(const Analysis& a, const RenderOptions& o, std::ostream& out);

}  // namespace mfu::detail
