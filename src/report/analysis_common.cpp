#include "report/analysis_common.hpp"

#include <fmt/format.h>

#include "mfu/error.hpp"
#include "mfu/units.hpp"

namespace mfu {

namespace detail {

std::string pct_or(const std::optional<double>& v, const char* fallback) {
  return v ? format_percent(*v) : std::string(fallback);
}

std::string headline(const Analysis& a) {
  std::string s = a.mfu ? fmt::format("MFU {}", format_percent(*a.mfu)) : std::string("MFU unknown");
  if (a.mfu_steady) s += fmt::format(" (steady state {})", format_percent(*a.mfu_steady));
  if (a.hfu) s += fmt::format(", HFU {}", format_percent(*a.hfu));
  if (known(a.gpus) || !a.gpu.empty()) {
    s += fmt::format(" on {}{}", known(a.gpus) ? format_number(a.gpus) + " x " : std::string(),
                     a.gpu.empty() ? std::string("an unknown accelerator") : a.gpu);
  }
  if (a.flops_source == "framework") s += " (FLOPs: the framework's own count)";
  return s;
}

std::vector<std::string> framework_lines(const Analysis& a) {
  std::vector<std::string> out;
  if (!a.framework_flops_per_s_per_gpu) return out;
  std::string l = fmt::format("the log prints {} per GPU", format_flop_rate(*a.framework_flops_per_s_per_gpu));
  if (a.framework_mfu_steady) l += fmt::format(" ({} of peak)", format_percent(*a.framework_mfu_steady));
  if (a.recomputed_flops_per_s_per_gpu && a.framework_agreement) {
    l += fmt::format("; mfu recomputes {} under the {} convention ({:+.1f}%)",
                     format_flop_rate(*a.recomputed_flops_per_s_per_gpu), a.framework_convention,
                     *a.framework_agreement * 100.0);
  }
  out.push_back(l);
  if (a.achieved_flops_per_s_per_gpu_steady && a.flops_source != "framework") {
    const double d = *a.achieved_flops_per_s_per_gpu_steady / *a.framework_flops_per_s_per_gpu - 1.0;
    out.push_back(fmt::format("mfu's own count ({} convention): {} per GPU in steady state ({:+.1f}% vs the log)",
                              a.convention, format_flop_rate(*a.achieved_flops_per_s_per_gpu_steady), d * 100.0));
  }
  return out;
}

}  // namespace detail

void render_analysis(const Analysis& a, const Run& run, OutputFormat format, const RenderOptions& o,
                     std::ostream& out) {
  switch (format) {
    case OutputFormat::kText: detail::render_analysis_text(a, o, out); return;
    case OutputFormat::kJson: detail::render_analysis_json(a, run, o, out); return;
    case OutputFormat::kMarkdown: detail::render_analysis_markdown(a, out); return;
    case OutputFormat::kCsv: detail::render_analysis_csv(a, run, out); return;
    case OutputFormat::kHtml: detail::render_analysis_html(a, out); return;
  }
  throw Error("unknown output format");
}

}  // namespace mfu
