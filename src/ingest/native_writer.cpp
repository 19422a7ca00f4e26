// write_native(): any run as mfu's native JSON Lines (the inverse of native_jsonl.cpp).
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "mfu/ingest.hpp"

namespace mfu {
namespace {

/// Shortest text that parses back to the same double ("0.33", not "0.33000000000000002").
std::string num(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt::format("{}", v);
}

/// A JSON string literal (not `quoted`: for a non-const std::string, argument-dependent lookup
/// picks std::quoted, which leaves control characters raw and so writes invalid JSON).
std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// The meta line: every metadata value, the format the run came from, and when the log began
/// (a log's first line often comes well before its first record: startup is measured from it).
void write_meta(const Run& run, std::ostream& out) {
  out << "{\"type\":\"meta\"";
  out << ",\"framework\":" << json_string(run.format);
  for (const auto& [key, mv] : run.meta.all()) {
    std::string k = key == "gpu_name" ? "gpu" : key == "model_name" ? "model" : key;
    if (k == "framework") continue;
    if (const double* d = std::get_if<double>(&mv.value)) {
      out << ',' << json_string(k) << ':' << num(*d);
    } else {
      out << ',' << json_string(k) << ':' << json_string(std::get<std::string>(mv.value));
    }
  }
  if (known(run.first_timestamp_s)) out << ",\"timestamp\":" << num(run.first_timestamp_s);
  out << "}\n";
}

std::string record_line(const Iteration& it) {
  std::string line = fmt::format("{{\"step\":{}", it.step);
  if (it.count != 1) line += fmt::format(",\"count\":{}", it.count);
  if (it.rank >= 0) line += fmt::format(",\"rank\":{}", it.rank);
  auto add = [&](const char* k, double v) {
    if (known(v)) line += fmt::format(",\"{}\":{}", k, num(v));
  };
  add("time_s", it.time_s);
  add("timestamp", it.timestamp_s);
  add("tokens", it.tokens);
  add("samples", it.samples);
  add("loss", it.loss);
  add("model_flops", it.model_flops);
  add("achieved_flops_per_s_per_gpu", it.reported_flops_per_gpu);
  add("mfu", it.reported_mfu);
  std::string phases;
  for (std::size_t p = 0; p < kPhaseCount; ++p) {
    if (!known(it.phase[p])) continue;
    phases += fmt::format("{}\"{}\":{}", phases.empty() ? "" : ",",
                          phase_key(static_cast<Phase>(p)), num(it.phase[p]));
  }
  if (!phases.empty()) line += ",\"phases\":{" + phases + "}";
  return line + "}\n";
}

std::string event_line(const Event& e) {
  const char* kind = e.kind == EventKind::kCheckpointSave ? "checkpoint" : to_string(e.kind);
  std::string line = fmt::format("{{\"type\":\"event\",\"kind\":\"{}\",\"step\":{}", kind, e.step);
  if (known(e.duration_s)) line += ",\"duration_s\":" + num(e.duration_s);
  if (known(e.timestamp_s)) line += ",\"timestamp\":" + num(e.timestamp_s);
  if (!e.detail.empty()) line += ",\"detail\":" + json_string(e.detail);
  return line + "}\n";
}

}  // namespace

void write_native(const Run& run, std::ostream& out) {
  write_meta(run, out);
  // Events go at their slots among the records (place_events: the analysis places an event
  // there; a checkpoint load before the first record is startup, after it a restart), and the
  // restart events, derived from the step counter and the stated restarts, become marks.
  std::vector<const Event*> events;
  for (const Event& e : run.events)
    if (e.kind != EventKind::kRestart) events.push_back(&e);
  const IterationTable& t = run.iterations;
  const std::vector<SlottedEvent> placed = place_events(t, std::move(events));
  std::size_t next_event = 0;
  std::size_t next_restart = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    for (; next_event < placed.size() && placed[next_event].slot <= i; ++next_event)
      out << event_line(*placed[next_event].event);
    // Each later incarnation starts after a stated restart. Read back as one stream, a counter
    // that goes back a little could pass for lines written out of order (the ranks' streams
    // that showed the restart are combined), and a step repeated across a stated restart for
    // one step printed twice.
    while (next_restart < run.restarts_at.size() && run.restarts_at[next_restart] < i)
      ++next_restart;
    if (next_restart < run.restarts_at.size() && run.restarts_at[next_restart] == i) {
      Event mark;
      mark.kind = EventKind::kRestart;
      mark.step = t.step(i);
      out << event_line(mark);
    }
    out << record_line(t[i]);
  }
  for (; next_event < placed.size(); ++next_event) out << event_line(*placed[next_event].event);
  // When the log ended (after its last record: a final evaluation, the shutdown).
  if (known(run.last_timestamp_s))
    out << "{\"type\":\"meta\",\"timestamp\":" << num(run.last_timestamp_s) << "}\n";
}

}  // namespace mfu
