// mfu's native JSON Lines, for users who add one line to their training loop (DESIGN.md):
//   {"type":"meta","gpu":"h100-sxm","gpus":16,"dtype":"bf16","model":"llama3-8b","seq_len":8192}
//   {"step":1,"time_s":0.330,"model_flops":3.5e13,"tokens":131072,"phases":{"comm_s":0.080}}
//   {"type":"event","kind":"checkpoint","step":500,"duration_s":42.0}
// Units are in the key suffix (_s, _ms, _us); unknown keys are kept out of the way.
#include <fmt/format.h>
#include <simdjson.h>

#include <cstring>

#include "ingest/line_reader.hpp"
#include "ingest/native_fields.hpp"
#include "ingest/parser.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

// The DOM API dispatches to the best SIMD kernel at run time (On-Demand would be fixed at
// compile time to the generic kernel on a portable build).
using simdjson::dom::element_type;

/// Reads a JSON value as a double: numbers, numeric strings ("0.33"), null -> NaN.
double as_number(simdjson::dom::element v) {
  switch (v.type()) {
    case element_type::DOUBLE: return v.get_double().value_unsafe();
    case element_type::INT64: return static_cast<double>(v.get_int64().value_unsafe());
    case element_type::UINT64: return static_cast<double>(v.get_uint64().value_unsafe());
    case element_type::BOOL: return v.get_bool().value_unsafe() ? 1.0 : 0.0;
    case element_type::STRING: {
      auto d = parse_double(v.get_string().value_unsafe());
      return d ? *d : kUnknown;
    }
    default: return kUnknown;
  }
}

std::string as_text(simdjson::dom::element v) {
  switch (v.type()) {
    case element_type::STRING: return std::string(v.get_string().value_unsafe());
    case element_type::BOOL: return v.get_bool().value_unsafe() ? "true" : "false";
    case element_type::DOUBLE:
    case element_type::INT64:
    case element_type::UINT64: return fmt::format("{}", as_number(v));
    default: return {};
  }
}

class NativeJsonlParser : public LineParser {
 public:
  explicit NativeJsonlParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view text, std::uint64_t number) override {
    std::string_view t = trim(text);
    if (t.empty() || t.front() == '#') return;
    if (t.front() != '{') {
      out_.malformed(number, "not a JSON object; native lines start with '{'");
      return;
    }
    // The reader guarantees kLinePadding readable bytes after each line (simdjson's padding).
    if (!parse(t.data(), t.size(), number)) {
      // Python's json.dumps writes NaN and Infinity, which JSON does not allow: retry with null.
      if (contains(t, "NaN") || contains(t, "Infinity")) {
        simdjson::padded_string padded(replace_non_finite(t));
        if (parse(padded.data(), padded.size(), number)) return;
      }
      out_.malformed(number, "not valid JSON (cut off, or not a native mfu line)");
    }
  }

 private:
  static std::string replace_non_finite(std::string_view t) {
    std::string s(t);
    for (const char* word : {"-Infinity", "Infinity", "NaN"}) {
      std::size_t p = 0;
      while ((p = s.find(word, p)) != std::string::npos) {
        s.replace(p, std::strlen(word), "null");
        p += 4;
      }
    }
    return s;
  }

  bool parse(const char* data, std::size_t len, std::uint64_t number) {
    simdjson::dom::element doc;
    if (parser_.parse(data, len, false).get(doc)) return false;
    simdjson::dom::object obj;
    if (doc.get_object().get(obj)) return false;
    NativeRecord rec;
    for (auto field : obj) {
      const std::string_view key = field.key;
      const simdjson::dom::element v = field.value;
      if (key == "phases" || key == "timers") {
        simdjson::dom::object ph;
        if (v.get_object().get(ph)) continue;
        for (auto pf : ph) rec.phase(pf.key, as_number(pf.value));
        continue;
      }
      const element_type type = v.type();
      if (type == element_type::OBJECT || type == element_type::ARRAY) continue;  // unknown nested keys
      if (type == element_type::STRING && (key == "type" || key == "kind" || key == "gpu" || key == "model" ||
                                           key == "dtype" || key == "recompute" || key == "convention" ||
                                           key == "detail" || key == "name" || key == "framework")) {
        rec.text(key, as_text(v));
      } else {
        rec.number(key, as_number(v));
      }
    }
    rec.emit(out_, number);
    return true;
  }

  RunBuilder& out_;
  simdjson::dom::parser parser_;
};

double sniff(std::string_view head, std::string_view filename) {
  double score = 0;
  std::size_t pos = 0;
  int lines = 0, objects = 0;
  while (pos < head.size() && lines < 200) {
    std::size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) nl = head.size();
    std::string_view l = trim(head.substr(pos, nl - pos));
    pos = nl + 1;
    if (l.empty()) continue;
    ++lines;
    if (l.front() != '{') continue;
    ++objects;
    if (contains(l, "\"type\"") && contains(l, "\"meta\"")) score += 3;
    if (contains(l, "\"step\"") && (contains(l, "\"time_s\"") || contains(l, "\"time_ms\"") ||
                                    contains(l, "\"model_flops\"")))
      score += 1;
  }
  (void)filename;
  // A native log is JSON Lines: prose with a few JSON examples (a README) is not one.
  if (objects * 2 < lines) return 0;
  return score;
}

std::unique_ptr<LineParser> make(RunBuilder& out) { return std::make_unique<NativeJsonlParser>(out); }

}  // namespace

const FormatSpec& native_jsonl_format() {
  static const FormatSpec spec{"native", "mfu native JSON Lines (meta, step and event lines)", sniff, make, nullptr,
                               nullptr, 0, TimingKind::kPerIteration};
  return spec;
}

}  // namespace mfu::detail
