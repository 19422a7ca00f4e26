#pragma once
// The pieces of the HTML reports: the page frame, the analysis' sections and its charts. The
// analysis page (`mfu analyze --output html`) and the gate page (`mfu check --output html`,
// which draws the baseline over the run) are both made of them.

#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "mfu/analysis.hpp"
#include "mfu/report.hpp"

namespace mfu::detail {

/// A baseline's steady step times drawn over the run's (empty: none).
struct BaselineOverlay {
  std::vector<double> step_times_s;
  double median_s = std::numeric_limits<double>::quiet_NaN();
  std::string label = "baseline";
};

// Charts (analysis_html_charts.cpp); each is empty when the run has nothing to draw.
[[nodiscard]] std::string step_time_chart(const Analysis& a, const BaselineOverlay& base);
[[nodiscard]] std::string mfu_chart(const Analysis& a);
[[nodiscard]] std::string tokens_chart(const Analysis& a);
[[nodiscard]] std::string phase_chart(const Analysis& a);
[[nodiscard]] std::string step_histogram(const Analysis& a, const BaselineOverlay& base);
[[nodiscard]] std::string waterfall_chart(const Analysis& a);

// The page (analysis_html.cpp).
/// A table cell of escaped text; `numeric` right-aligns it.
[[nodiscard]] std::string cell(const std::string& text, bool numeric = false);
void html_open(const std::string& title, std::ostream& out);
/// Everything about the run: headline, summary, charts, waterfall, stalls, fixes, ranks, inputs.
void analysis_html_body(const Analysis& a, const BaselineOverlay& base, std::ostream& out);
/// mfu's version, when the report was made and the command that made it; closes the page.
void html_close(const RenderOptions& o, std::ostream& out);

}  // namespace mfu::detail
