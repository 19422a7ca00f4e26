// Renders `mfu whatif TRACES --no-stragglers`: today's and the straggler-free step, per step,
// and which ranks cost what.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "mfu/error.hpp"
#include "mfu/report.hpp"
#include "mfu/units.hpp"
#include "report/markup.hpp"
#include "report/wrap.hpp"

namespace mfu {
namespace {

std::string change_from_now(double now, double then) {
  return now > 0 ? fmt::format("{:+.1f}%", (then / now - 1) * 100) : std::string("-");
}

void json_out(const StragglerProjection& p, const std::optional<double>& mfu,
              const std::string& title, std::ostream& out) {
  nlohmann::json j;
  j["schema_version"] = kJsonSchemaVersion;
  j["inputs"] = title;
  j["method"] = "median arrival at every matched collective (Lin et al., OSDI 2025)";
  j["step_time_s"] = {{"now", p.now_s}, {"projected", p.projected_s}};
  if (mfu && p.projected_s > 0)
    j["mfu_steady"] = {{"now", *mfu}, {"projected", *mfu * p.now_s / p.projected_s}};
  j["matched_collectives"] = p.matched_collectives;
  j["steps"] = nlohmann::json::array();
  for (const auto& s : p.steps)
    j["steps"].push_back({{"step", s.step}, {"now_s", s.now_s}, {"projected_s", s.projected_s}});
  j["ranks"] = nlohmann::json::array();
  for (const auto& c : p.costs)
    j["ranks"].push_back(
        {{"rank", c.rank}, {"seconds", c.seconds}, {"collectives_last", c.collectives}});
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace

void render_no_stragglers(const StragglerProjection& p, const std::optional<double>& mfu_steady,
                          const std::string& title, OutputFormat format, std::ostream& out) {
  if (format == OutputFormat::kJson) return json_out(p, mfu_steady, title, out);
  if (format != OutputFormat::kText && format != OutputFormat::kMarkdown)
    throw Error("this what-if writes text, json or markdown");
  const bool md = format == OutputFormat::kMarkdown;
  const auto esc = [&](const std::string& s) { return md ? detail::escape_markdown(s) : s; };
  out << (md ? "## " : "") << "what if no rank were late: " << esc(title) << "\n"
      << (md ? "\n" : "");
  out << fmt::format("{}step time  {} now, {} without stragglers ({})\n", md ? "- " : "  ",
                     format_duration(p.now_s), format_duration(p.projected_s),
                     change_from_now(p.now_s, p.projected_s));
  if (mfu_steady && p.projected_s > 0)
    out << fmt::format("{}MFU        {} now, {} without stragglers\n", md ? "- " : "  ",
                       format_percent(*mfu_steady),
                       format_percent(*mfu_steady * p.now_s / p.projected_s));
  out << fmt::format("\n{}per step\n", md ? "### " : "");
  for (const auto& s : p.steps)
    out << fmt::format("{}step {}: {} -> {}\n", md ? "- " : "  ", s.step, format_duration(s.now_s),
                       format_duration(s.projected_s));
  out << fmt::format("\n{}what the late ranks cost\n", md ? "### " : "");
  if (p.costs.empty()) out << (md ? "- " : "  ") << "no rank arrived late at a collective\n";
  for (const auto& c : p.costs)
    out << fmt::format(
        "{}rank {}: {} over the traced steps (last, and late, at {} of {} "
        "collectives)\n",
        md ? "- " : "  ", c.rank, format_duration(c.seconds), c.collectives, p.matched_collectives);
  const std::string method =
      "(every collective matched across ranks starts when the median rank arrived instead of the "
      "last, as in Lin et al., \"Understanding Stragglers in Large Model Training Using What-if "
      "Analysis\", OSDI 2025; the ranks leave a collective together, so a step's savings add up)";
  out << '\n' << (md ? method + "\n" : detail::wrap(method, 100, "  ", "  "));
}

}  // namespace mfu
