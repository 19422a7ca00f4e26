// Renders `mfu check`: the verdict as text, JSON, markdown, JUnit XML and GitHub annotations.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "mfu/error.hpp"
#include "mfu/gate.hpp"
#include "mfu/units.hpp"
#include "report/analysis_common.hpp"
#include "report/html_parts.hpp"
#include "report/markup.hpp"

namespace mfu {
namespace {

/// GitHub workflow commands escape %, CR and LF in the message.
std::string gh(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '%')
      o += "%25";
    else if (c == '\r')
      o += "%0D";
    else if (c == '\n')
      o += "%0A";
    else
      o += c;
  }
  return o;
}

nlohmann::json num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

/// "passed", "failed" or "cannot judge" (the run gives no verdict: exit 2).
const char* verdict(const GateResult& r) {
  if (!r.cannot_judge.empty()) return "cannot judge";
  return r.passed ? "passed" : "failed";
}

/// A check whose quantity is unknown neither passed nor failed.
const char* status(const CheckResult& c) {
  if (c.passed) return "pass";
  return std::isfinite(c.measured) ? "FAIL" : "n/a";
}

/// A check's measured value or limit in its unit ("-" when unknown).
std::string check_value(const CheckResult& c, double x) {
  if (!std::isfinite(x)) return "-";
  if (c.unit == "ratio") return format_percent(x, 2);
  if (c.unit == "s") return format_duration(x);
  return format_number(x, 5);
}

}  // namespace

void render_gate(const GateResult& r, const Analysis& a, OutputFormat format, bool color,
                 std::ostream& out) {
  if (format == OutputFormat::kJson) {
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["passed"] = r.passed;
    j["verdict"] = verdict(r);
    j["cannot_judge"] = r.cannot_judge;
    j["checks"] = nlohmann::json::array();
    for (const auto& c : r.checks)
      j["checks"].push_back({{"name", c.name},
                             {"passed", c.passed},
                             {"measured", num(c.measured)},
                             {"limit", num(c.limit)},
                             {"comparison", c.comparison},
                             {"unit", c.unit},
                             {"message", c.message},
                             {"bucket", c.bucket}});
    if (r.regression) {
      const auto& t = *r.regression;
      j["regression"] = {{"metric", t.metric},        {"drop", num(t.drop)},
                         {"ci_low", num(t.ci_low)},   {"ci_high", num(t.ci_high)},
                         {"p_value", num(t.p_value)}, {"significant", t.significant}};
    }
    j["notes"] = r.notes;
    j["mfu"] = a.mfu ? nlohmann::json(*a.mfu) : nlohmann::json(nullptr);
    j["mfu_steady"] = a.mfu_steady ? nlohmann::json(*a.mfu_steady) : nlohmann::json(nullptr);
    j["inputs"] = a.inputs;
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  if (format == OutputFormat::kMarkdown) {
    out << fmt::format("## mfu check: {}\n\n",
                       r.passed ? "passed" : fmt::format("**{}**", verdict(r)));
    const auto md = [](std::string_view s) { return detail::escape_markdown(s); };
    for (const auto& w : r.cannot_judge) out << "- cannot judge: " << md(w) << '\n';
    if (!r.cannot_judge.empty()) out << '\n';
    out << "| check | result | measured | limit | details |\n|---|---|---|---|---|\n";
    for (const auto& c : r.checks)
      out << fmt::format("| {} | {} | {} | {} {} | {} |\n", c.name,
                         c.passed ? "pass" : fmt::format("**{}**", status(c)),
                         check_value(c, c.measured), c.comparison, check_value(c, c.limit),
                         md(c.message));
    for (const auto& n : r.notes) out << "\n> " << md(n) << '\n';
    out << "\n" << md(detail::headline(a)) << "\n";
    return;
  }
  if (format == OutputFormat::kHtml) {
    render_gate_html(r, a, nullptr, RenderOptions{}, out);
    return;
  }
  if (format != OutputFormat::kText) throw Error("mfu check writes text, json, markdown or html");
  const char* green = color ? "\x1b[32m" : "";
  const char* red = color ? "\x1b[31m" : "";
  const char* reset = color ? "\x1b[0m" : "";
  out << fmt::format("mfu check: {}{}{}\n", r.passed ? green : red,
                     r.cannot_judge.empty() ? (r.passed ? "passed" : "FAILED") : "CANNOT JUDGE",
                     reset);
  for (const auto& w : r.cannot_judge) out << "  cannot judge: " << w << '\n';
  for (const auto& c : r.checks)
    out << fmt::format("  {}{}{}  {:<22} {}\n", c.passed ? green : red, status(c), reset, c.name,
                       c.message);
  for (const auto& n : r.notes) out << "  note: " << n << '\n';
  out << "  " << detail::headline(a) << '\n';
}

void render_gate_html(const GateResult& r, const Analysis& a, const Baseline* baseline,
                      const RenderOptions& o, std::ostream& out) {
  using detail::escape_markup;
  detail::html_open(fmt::format("mfu check: {}", verdict(r)), out);
  out << fmt::format("<h1 id=\"verdict\" class=\"{}\">mfu check: {}</h1>\n",
                     r.passed ? "passed" : "failed", verdict(r));
  if (!r.cannot_judge.empty()) {
    out << "<ul>\n";
    for (const auto& w : r.cannot_judge)
      out << "<li>cannot judge: " << escape_markup(w) << "</li>\n";
    out << "</ul>\n";
  }
  out << "<div class=\"wide\"><table id=\"checks\"><tr><th>check</th><th>result</th>"
         "<th class=\"num\">measured</th><th class=\"num\">limit</th><th>details</th></tr>\n";
  for (const auto& c : r.checks)
    out << fmt::format(
        "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{} {}</td>"
        "<td>{}</td></tr>\n",
        escape_markup(c.name), c.passed ? "pass" : fmt::format("<b>{}</b>", status(c)),
        check_value(c, c.measured), escape_markup(c.comparison), check_value(c, c.limit),
        escape_markup(c.message));
  out << "</table></div>\n";
  for (const auto& n : r.notes) out << "<p class=\"small\">" << escape_markup(n) << "</p>\n";
  detail::BaselineOverlay overlay;
  if (baseline) {
    overlay.step_times_s = baseline->step_times_s;
    overlay.median_s = baseline->step_time_median_s.value_or(kUnknown);
    overlay.label = "baseline";
  }
  detail::analysis_html_body(a, overlay, out);
  detail::html_close(o, out);
}

void render_junit(const GateResult& r, const Analysis& a, std::ostream& out) {
  std::size_t failures = 0;
  for (const auto& c : r.checks) failures += !c.passed;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << fmt::format("<testsuites name=\"mfu\" tests=\"{}\" failures=\"{}\">\n", r.checks.size(),
                     failures);
  out << fmt::format(
      "  <testsuite name=\"mfu check\" tests=\"{}\" failures=\"{}\" errors=\"{}\" "
      "skipped=\"0\">\n",
      r.checks.size() + (r.cannot_judge.empty() ? 0 : 1), failures, r.cannot_judge.empty() ? 0 : 1);
  out << "    <properties>\n";
  out << fmt::format("      <property name=\"inputs\" value=\"{}\"/>\n",
                     detail::escape_markup(fmt::format("{}", fmt::join(a.inputs, " "))));
  // The values the checks judged, not the whole-run MFU they may not have looked at.
  for (const auto& c : r.checks)
    out << fmt::format("      <property name=\"{}\" value=\"{}\"/>\n",
                       detail::escape_markup(c.name),
                       std::isfinite(c.measured) ? fmt::format("{}", c.measured) : "unknown");
  out << "    </properties>\n";
  if (!r.cannot_judge.empty()) {
    const std::string why = fmt::format("{}", fmt::join(r.cannot_judge, "; "));
    out << fmt::format(
        "    <testcase classname=\"mfu.check\" name=\"judgeable\">\n      <error "
        "message=\"{}\" type=\"cannot judge\">{}</error>\n    </testcase>\n",
        detail::escape_markup(why), detail::escape_markup(why));
  }
  for (const auto& c : r.checks) {
    out << fmt::format("    <testcase classname=\"mfu.check\" name=\"{}\">",
                       detail::escape_markup(c.name));
    if (!c.passed) {
      out << fmt::format("\n      <failure message=\"{}\" type=\"threshold\">{}</failure>\n    ",
                         detail::escape_markup(c.message),
                         detail::escape_markup(
                             c.message + (c.bucket.empty() ? "" : " (bucket: " + c.bucket + ")")));
    } else {
      out << fmt::format("\n      <system-out>{}</system-out>\n    ",
                         detail::escape_markup(c.message));
    }
    out << "</testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
}

void render_github_annotations(const GateResult& r, std::ostream& out) {
  for (const auto& w : r.cannot_judge)
    out << "::error title=mfu check cannot judge::" << gh(w) << '\n';
  for (const auto& c : r.checks) {
    if (c.passed)
      out << "::notice title=mfu check " << gh(c.name) << "::" << gh(c.message) << '\n';
    else
      out << "::error title=mfu check " << gh(c.name) << "::" << gh(c.message) << '\n';
  }
}

}  // namespace mfu
