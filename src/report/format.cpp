#include <fmt/format.h>

#include "mfu/error.hpp"
#include "mfu/report.hpp"
#include "text.hpp"

namespace mfu {

OutputFormat parse_output_format(std::string_view name) {
  const std::string n = detail::to_lower(detail::trim(name));
  if (n == "text" || n == "txt") return OutputFormat::kText;
  if (n == "json") return OutputFormat::kJson;
  if (n == "markdown" || n == "md") return OutputFormat::kMarkdown;
  if (n == "csv") return OutputFormat::kCsv;
  if (n == "html") return OutputFormat::kHtml;
  if (n == "summary") return OutputFormat::kSummary;
  throw Error(fmt::format("unknown output format '{}'", name),
              "use text, json, markdown, csv, html or (mfu analyze) summary");
}

}  // namespace mfu
