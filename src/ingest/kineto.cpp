// PyTorch profiler / Kineto Chrome-trace JSON: detection here; the streaming reader and the
// per-device analysis live in src/trace/.
#include "ingest/parser.hpp"
#include "mfu/error.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

double sniff(std::string_view head, std::string_view) {
  if (!contains(head, "\"traceEvents\"")) return 0;
  double s = 5;
  if (contains(head, "\"schemaVersion\"")) s += 2;
  if (contains(head, "\"deviceProperties\"")) s += 2;
  if (contains(head, "\"ph\"")) s += 1;
  return s;
}

void parse(ByteSource&, RunBuilder&) {
  throw Error("profiler traces are read by the trace analyzer", "run 'mfu analyze TRACE' on it");
}

}  // namespace

const FormatSpec& kineto_format() {
  static const FormatSpec spec{"kineto", "PyTorch profiler (Kineto) Chrome-trace JSON, .json or .json.gz",
                               sniff,    nullptr,
                               nullptr,  parse,
                               0,        TimingKind::kPerIteration};
  return spec;
}

}  // namespace mfu::detail
