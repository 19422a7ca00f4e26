// PyTorch profiler / Kineto Chrome-trace JSON (torch.profiler export_chrome_trace, HTA inputs):
//   {"schemaVersion": 1, "deviceProperties": [...], "traceEvents": [{"ph": "X", "cat": "kernel",
//    "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)", "pid": 0, "tid": 7, "ts":
//    4458677009853.422, "dur": 2636.669, "args": {"correlation": 60047, ...}}, ...],
//    "distributedInfo": {...}}
// or, from PyTorch without Kineto, the bare array of events (sniff_bare_array).
// The reader and the device accounting live in src/trace/.
#include <memory>

#include "ingest/parser.hpp"
#include "ingest/trace_run.hpp"
#include "text.hpp"
#include "trace/kineto_reader.hpp"
#include "trace/trace_timeline.hpp"

namespace mfu::detail {
namespace {

/// The older form (PyTorch before Kineto, and builds without it, such as Debian's 1.13): a bare
/// JSON array of events, [{"name": "ProfilerStep#1", "ph": "X", "pid": "CPU functions", ...}].
double sniff_bare_array(std::string_view head) {
  const std::string_view body = trim(head);
  if (body.empty() || body.front() != '[') return 0;
  if (!contains(head, "\"ph\"") || !contains(head, "\"ts\"")) return 0;
  return contains(head, "ProfilerStep#") ? 7 : 5;
}

double sniff_kineto(std::string_view head, std::string_view) {
  if (!contains(head, "\"traceEvents\"")) return sniff_bare_array(head);
  double s = 5;
  if (contains(head, "\"schemaVersion\"")) s += 2;
  if (contains(head, "\"deviceProperties\"")) s += 2;
  if (contains(head, "\"ph\"")) s += 1;
  return s;
}

void parse(ByteSource& source, RunBuilder& out) {
  KernelPatterns patterns = KernelPatterns::defaults();
  for (const auto& p : out.options.comm_kernel_patterns) patterns.comm.push_back(to_lower(p));
  RawTrace raw = read_kineto(source, out.label(), patterns);
  TraceRankSummary rank = summarize_trace(raw);
  auto summary = std::make_shared<TraceSummary>(combine_ranks({std::move(rank)}));
  fill_run_from_trace(out.run, std::move(summary));
}

}  // namespace

const FormatSpec& kineto_format() {
  static const FormatSpec spec{"kineto",
                               "PyTorch profiler (Kineto) Chrome-trace JSON, .json or .json.gz",
                               sniff_kineto,
                               nullptr,
                               nullptr,
                               parse,
                               0,
                               TimingKind::kPerIteration};
  return spec;
}

}  // namespace mfu::detail
