// mfu's native format as CSV: a header row with the native key names (step, time_s or
// time_ms, model_flops, tokens, forward_s, comm_s, data_s, ...), one row per iteration.
//   step,time_s,model_flops,tokens,forward_s,backward_s,comm_s,data_s
//   1,0.330,3.5e13,131072,0.100,0.150,0.080,0.0
#include <fmt/format.h>

#include "ingest/native_fields.hpp"
#include "ingest/parser.hpp"
#include "io/csv.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

class NativeCsvParser : public LineParser {
 public:
  explicit NativeCsvParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view text, std::uint64_t number) override {
    std::string_view t = trim(text);
    if (t.empty() || t.front() == '#') return;
    auto fields = split_csv(t);
    if (header_.empty()) {
      for (auto& f : fields) header_.push_back(to_lower(trim(f)));
      return;
    }
    if (fields.size() != header_.size()) {
      out_.malformed(number, fmt::format("row has {} fields, the header has {}", fields.size(),
                                         header_.size()));
      return;
    }
    NativeRecord rec;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      std::string_view v = trim(fields[i]);
      if (v.empty()) continue;
      const std::string& key = header_[i];
      if (key == "type" || key == "kind" || key == "gpu" || key == "model" || key == "dtype" ||
          key == "detail") {
        rec.text(key, std::string(v));
        continue;
      }
      auto d = parse_double(v);
      if (!d) {
        out_.malformed(number, fmt::format("column '{}' holds '{}', not a number", key, v));
        return;
      }
      rec.number(key, *d);
    }
    rec.emit(out_, number);
  }

 private:
  RunBuilder& out_;
  std::vector<std::string> header_;
};

double sniff_native_csv(std::string_view head, std::string_view filename) {
  const std::size_t nl = head.find('\n');
  const std::string first = to_lower(trim(head.substr(0, nl)));
  if (first.empty() || first.front() == '{') return 0;
  const auto cols = split_csv(first);
  bool step = false, time = false;
  for (const auto& c : cols) {
    step = step || c == "step" || c == "iteration";
    time = time || c == "time_s" || c == "time_ms" || c == "step_time_s" || c == "step_time_ms";
  }
  if (step && time) return 5 + (ends_with(filename, ".csv") ? 1 : 0);
  return 0;
}

}  // namespace

const FormatSpec& native_csv_format() {
  static const FormatSpec spec{"native-csv",
                               "mfu native format as CSV (step, time_s, model_flops, ... columns)",
                               sniff_native_csv,
                               make_line_parser<NativeCsvParser>,
                               nullptr,
                               nullptr,
                               0,
                               TimingKind::kPerIteration,
                               nullptr,
                               true,
                               true};
  return spec;
}

}  // namespace mfu::detail
