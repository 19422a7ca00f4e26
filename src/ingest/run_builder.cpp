#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ingest/parser.hpp"
#include "ingest/text_scan.hpp"
#include "mfu/error.hpp"
#include "mfu/inputs.hpp"

namespace mfu::detail {

RunBuilder::RunBuilder(Run& r, const IngestOptions& o, std::string label, std::uint16_t index)
    : run(r), options(o), file_index(index), label_(std::move(label)) {}

/// A quantity a parser derived by dividing or scaling printed numbers can overflow (a wall clock
/// of 1e308 s over two steps); whatever the parser, such a value is unknown, never infinite.
namespace {

bool clear_infinite(Iteration& it) {
  bool any = false;
  auto clear = [&any](double& v) {
    if (std::isinf(v)) {
      v = kUnknown;
      any = true;
    }
  };
  for (double* v : {&it.time_s, &it.timestamp_s, &it.tokens, &it.samples, &it.loss, &it.model_flops,
                    &it.reported_flops_per_gpu, &it.reported_mfu})
    clear(*v);
  for (double& v : it.phase) clear(v);
  return any;
}

}  // namespace

void RunBuilder::drop_loss_unless_kept(Iteration& it) {
  if (options.keep_loss || !known(it.loss)) return;
  run.loss_left_out = true;
  it.loss = kUnknown;  // never stored: the loss column stays unallocated
}

void RunBuilder::replace_last(Iteration it) {
  if (clear_infinite(it)) warn(it.line, "a number on this line is out of range: left unknown");
  drop_loss_unless_kept(it);
  run.iterations.set(run.iterations.size() - 1, it);
}

void RunBuilder::add(Iteration it) {
  if (clear_infinite(it)) warn(it.line, "a number on this line is out of range: left unknown");
  drop_loss_unless_kept(it);
  it.file = file_index;
  if (it.line == line_number_ && line_number_ > 0) {
    if (it.rank < 0) it.rank = line_.rank;
    if (!known(it.timestamp_s)) it.timestamp_s = line_.timestamp_s;
  }
  saw_rank(it.rank);
  if (known(it.timestamp_s)) timestamp(it.timestamp_s);
  run.iterations.push_back(it);
}

void RunBuilder::add_event(Event e) {
  e.file = file_index;
  if (e.line == line_number_ && line_number_ > 0) {
    if (e.rank < 0) e.rank = line_.rank;
    if (!known(e.timestamp_s)) e.timestamp_s = line_.timestamp_s;
  }
  if (known(e.timestamp_s)) timestamp(e.timestamp_s);
  run.events.push_back(std::move(e));
}

void RunBuilder::set_line(std::uint64_t number, const LineAttrs& attrs) {
  line_number_ = number;
  line_ = attrs;
  if (known(attrs.timestamp_s)) timestamp(attrs.timestamp_s);
  saw_rank(attrs.rank);
}

double RunBuilder::line_timestamp(std::string_view body) const {
  return known(line_.timestamp_s) ? line_.timestamp_s : find_timestamp(body);
}

std::int32_t RunBuilder::line_rank(std::string_view body) const {
  return line_.rank >= 0 ? line_.rank : find_rank(body);
}

void RunBuilder::meta(std::string_view key, double value, std::uint64_t line, bool overwrite) {
  if (!std::isfinite(value)) return;
  // Parsers call this on every record line: a key already set costs a lookup, no string.
  if (!overwrite && run.meta.has(key)) return;
  run.meta.set(std::string(key), value, where(line), overwrite);
}

void RunBuilder::meta(std::string_view key, const std::string& value, std::uint64_t line,
                      bool overwrite) {
  if (value.empty()) return;
  if (!overwrite && run.meta.has(key)) return;
  run.meta.set(std::string(key), value, where(line), overwrite);
}

namespace {
std::string value_text(const MetaValue::Value& v) {
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{:g}", *d);
  return std::get<std::string>(v);
}
}  // namespace

std::string meta_conflict_message(const std::string& key, const MetaValue& kept,
                                  const MetaValue& other) {
  return fmt::format(
      "{} says {} = {}, but {} said {}: the first value is kept (if the job changed, analyze the "
      "pieces apart)",
      other.source, key, value_text(other.value), kept.source, value_text(kept.value));
}

void RunBuilder::meta_first(const std::string& key, const MetaValue::Value& value,
                            std::uint64_t line) {
  const auto& all = run.meta.all();
  const auto it = all.find(key);
  if (it == all.end()) {
    std::visit([&](const auto& v) { run.meta.set(key, v, where(line), false); }, value);
    return;
  }
  if (it->second.value != value)
    warn(line, meta_conflict_message(key, it->second, MetaValue{value, where(line)}));
}

void add_diagnostic(Run& run, Diagnostic d, std::size_t cap) {
  if (run.diagnostics.size() < cap)
    run.diagnostics.push_back(std::move(d));
  else
    ++run.suppressed_diagnostics;
}

void merge_diagnostics(Run& into, Run& from, std::size_t cap) {
  for (auto& d : from.diagnostics) add_diagnostic(into, std::move(d), cap);
  from.diagnostics.clear();
  into.suppressed_diagnostics += from.suppressed_diagnostics;
}

void merge_seen(Run& into, const Run& from) {
  for (const auto& f : from.fields)
    if (std::find(into.fields.begin(), into.fields.end(), f) == into.fields.end())
      into.fields.push_back(f);
  for (const auto r : from.ranks)
    if (std::find(into.ranks.begin(), into.ranks.end(), r) == into.ranks.end())
      into.ranks.push_back(r);
  if (known(from.first_timestamp_s) &&
      (!known(into.first_timestamp_s) || from.first_timestamp_s < into.first_timestamp_s))
    into.first_timestamp_s = from.first_timestamp_s;
  if (known(from.last_timestamp_s) &&
      (!known(into.last_timestamp_s) || from.last_timestamp_s > into.last_timestamp_s))
    into.last_timestamp_s = from.last_timestamp_s;
  into.lines_read += from.lines_read;
  into.bytes_read += from.bytes_read;
  into.loss_left_out = into.loss_left_out || from.loss_left_out;
}

void RunBuilder::diagnostic(Diagnostic::Severity s, std::uint64_t line,
                            const std::string& message) {
  if (run.diagnostics.size() >= options.max_diagnostics) {
    ++run.suppressed_diagnostics;  // before building the message's copy
    return;
  }
  run.diagnostics.push_back(Diagnostic{s, label_, line, message});
}

void RunBuilder::malformed(std::uint64_t line, const std::string& message) {
  ++run.malformed_lines;
  last_malformed_line = line;
  if (options.strict) {
    throw Error(message,
                fmt::format("fix or remove the line, or run without {} to skip it",
                            input_phrase(Input::kStrict)),
                Location{label_, line});
  }
  diagnostic(Diagnostic::Severity::kWarning, line, message);
}

void RunBuilder::warn(std::uint64_t line, const std::string& message) {
  diagnostic(Diagnostic::Severity::kWarning, line, message);
}

void RunBuilder::info(std::uint64_t line, const std::string& message) {
  diagnostic(Diagnostic::Severity::kInfo, line, message);
}

void RunBuilder::timestamp(double t) {
  if (!std::isfinite(t)) return;
  if (t < kYearlessLimit) {
    if (!known(first_yearless_) || t < first_yearless_) first_yearless_ = t;
    if (!known(last_yearless_) || t > last_yearless_) last_yearless_ = t;
    return;
  }
  if (!known(run.first_timestamp_s) || t < run.first_timestamp_s) run.first_timestamp_s = t;
  if (!known(run.last_timestamp_s) || t > run.last_timestamp_s) run.last_timestamp_s = t;
}

void RunBuilder::field(const char* name) {
  if (std::find(run.fields.begin(), run.fields.end(), name) == run.fields.end())
    run.fields.emplace_back(name);
}

void RunBuilder::saw_rank(std::int32_t rank) {
  if (rank < 0) return;
  if (std::find(run.ranks.begin(), run.ranks.end(), rank) == run.ranks.end())
    run.ranks.push_back(rank);
}

void RunBuilder::finish() {
  resolve_yearless_timestamps(run, first_yearless_, last_yearless_);
}

std::string RunBuilder::where(std::uint64_t line) const {
  return line == 0 ? label_ : fmt::format("{}:{}", label_, line);
}

}  // namespace mfu::detail
