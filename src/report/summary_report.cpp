// Renders job summaries: the fleet's GPU time per bucket (the waterfall of every job together),
// its MFU, and the same GPU time by accelerator, model and framework.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "mfu/error.hpp"
#include "mfu/report.hpp"
#include "mfu/units.hpp"
#include "report/fleet_common.hpp"
#include "report/markup.hpp"

namespace mfu {
namespace {

void breakdown(const char* title, const std::map<std::string, ExactCount>& m, ExactCount total,
               bool md, std::ostream& out) {
  out << fmt::format("\n{}{}\n", md ? "### " : "", title);
  for (const auto& [k, v] : detail::largest_first(m))
    out << fmt::format(
        "{}{:<28} {:>22} {:>7}\n", md ? "- " : "  ", md ? detail::escape_markdown(k) : k,
        format_gpu_time(detail::gpu_hours_of(v)),
        format_percent(total > 0 ? static_cast<double>(v) / static_cast<double>(total) : 0));
}

}  // namespace

void render_summary(const JobSummary& s, OutputFormat format, std::ostream& out) {
  if (format == OutputFormat::kSummary || format == OutputFormat::kJson) {
    out << summary_json(s) << '\n';
    return;
  }
  if (format != OutputFormat::kText && format != OutputFormat::kMarkdown)
    throw Error("job summaries are written as text, markdown, json or summary");
  const bool md = format == OutputFormat::kMarkdown;
  out << fmt::format(
      "{}{} on {}: MFU {} (model FLOPs over the peak FLOPs offered, jobs with a "
      "known MFU: {} of the GPU time)\n",
      md ? "## " : "", count_of(static_cast<double>(s.jobs), "job"), format_gpu_time(s.gpu_hours()),
      std::isfinite(s.mfu()) ? format_percent(s.mfu()) : std::string("unknown"),
      format_percent(
          s.gpu_ns > 0 ? static_cast<double>(s.mfu_gpu_ns) / static_cast<double>(s.gpu_ns) : 0));
  out << fmt::format("{}{} steps, {}, {} tokens\n", md ? "\n" : "  ",
                     format_figure(static_cast<double>(s.steps)),
                     count_of(static_cast<double>(s.restarts), "restart"),
                     format_count(static_cast<double>(s.tokens)));
  out << fmt::format("\n{}where the GPU time went\n", md ? "### " : "");
  std::vector<std::pair<std::string, ExactCount>> buckets;
  for (std::size_t b = 0; b < kBucketCount; ++b) {
    const BucketInfo& info = bucket_info(static_cast<BucketId>(b));
    if (auto it = s.bucket_gpu_ns.find(info.key); it != s.bucket_gpu_ns.end() && it->second > 0)
      out << fmt::format(
          "{}{:<34} {:>22} {:>7}\n", md ? "- " : "  ", info.label,
          format_gpu_time(detail::gpu_hours_of(it->second)),
          format_percent(static_cast<double>(it->second) / static_cast<double>(s.gpu_ns)));
  }
  breakdown("by accelerator", s.gpu_ns_by_gpu, s.gpu_ns, md, out);
  breakdown("by model", s.gpu_ns_by_model, s.gpu_ns, md, out);
  breakdown("by framework", s.gpu_ns_by_framework, s.gpu_ns, md, out);
  for (const auto& [key, m] : s.gpu_ns_by)
    breakdown(fmt::format("by {}", key).c_str(), m, s.gpu_ns, md, out);
}

}  // namespace mfu
