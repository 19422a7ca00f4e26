// Renders `mfu inspect`: what was read from a log.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "mfu/error.hpp"
#include "mfu/report.hpp"
#include "mfu/units.hpp"

namespace mfu {
namespace {

/// A number for JSON, null when unknown.
nlohmann::json or_null(double v) {
  return known(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json rank_stream_json(const RankStream& r) {
  return {{"rank", r.rank >= 0 ? nlohmann::json(r.rank) : nlohmann::json(nullptr)},
          {"records", r.records},
          {"slowest_steps", r.slowest_steps},
          {"restarts", r.restarts},
          {"mean_step_s", or_null(r.mean_time_s)},
          {"mean_data_wait_s", or_null(r.mean_data_s)},
          {"first_timestamp_s", or_null(r.first_timestamp_s)},
          {"last_timestamp_s", or_null(r.last_timestamp_s)}};
}

/// The ranks' evidence: who printed how many steps, who set the step time, who waited.
void write_rank_streams(const Run& run, std::ostream& out) {
  if (run.rank_streams.empty()) return;
  constexpr std::size_t kShown = 16;
  out << fmt::format(
      "rank streams {} (records, steps it was the slowest, mean step, mean data "
      "wait, restarts)\n",
      run.rank_streams.size());
  for (std::size_t i = 0; i < run.rank_streams.size() && i < kShown; ++i) {
    const RankStream& r = run.rank_streams[i];
    out << fmt::format("  rank {:>5}  {:>7}  {:>7}  {:>10}  {:>10}  {}\n",
                       r.rank >= 0 ? std::to_string(r.rank) : std::string("?"), r.records,
                       r.slowest_steps, known(r.mean_time_s) ? format_duration(r.mean_time_s) : "-",
                       known(r.mean_data_s) ? format_duration(r.mean_data_s) : "-", r.restarts);
  }
  if (run.rank_streams.size() > kShown)
    out << fmt::format("  ... and {} more\n", run.rank_streams.size() - kShown);
}

const char* timing_name(TimingKind t) {
  switch (t) {
    case TimingKind::kPerIteration: return "per iteration";
    case TimingKind::kAveraged: return "averaged over each log interval";
    case TimingKind::kSampled: return "sampled (one timed iteration per log line)";
    case TimingKind::kNone: return "none";
  }
  return "?";
}

std::string meta_value(const MetaValue& v) {
  if (const double* d = std::get_if<double>(&v.value)) return format_number(*d, 8);
  return std::get<std::string>(v.value);
}

}  // namespace

void render_inspect(const Run& run, OutputFormat format, std::ostream& out) {
  std::size_t timed = 0;
  std::uint64_t iterations = 0;
  double time_sum = 0;
  for_each_record(run.iterations, [&](std::size_t, const Iteration& it) {
    iterations += it.count;
    if (known(it.time_s)) {
      ++timed;
      time_sum += it.time_s * it.count;
    }
  });
  const std::size_t store_bytes = run.iterations.memory_bytes();
  if (format == OutputFormat::kJson) {
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["format"] = run.format;
    j["inputs"] = run.inputs;
    j["records"] = run.iterations.size();
    j["iterations"] = iterations;
    j["timed_records"] = timed;
    j["record_store_bytes"] = store_bytes;
    j["timing"] = timing_name(run.timing);
    j["fields"] = run.fields;
    j["ranks"] = run.ranks;
    nlohmann::json streams = nlohmann::json::array();
    for (const auto& r : run.rank_streams) streams.push_back(rank_stream_json(r));
    j["rank_streams"] = std::move(streams);
    j["lines_read"] = run.lines_read;
    j["bytes_read"] = run.bytes_read;
    j["malformed_lines"] = run.malformed_lines;
    j["truncated"] = run.truncated;
    nlohmann::json meta = nlohmann::json::object();
    for (const auto& [k, v] : run.meta.all()) {
      nlohmann::json e;
      if (const double* d = std::get_if<double>(&v.value))
        e["value"] = *d;
      else
        e["value"] = std::get<std::string>(v.value);
      e["source"] = v.source;
      meta[k] = e;
    }
    j["meta"] = meta;
    j["events"] = nlohmann::json::array();
    for (const auto& e : run.events) {
      nlohmann::json ej{
          {"kind", to_string(e.kind)}, {"step", e.step}, {"line", e.line}, {"detail", e.detail}};
      if (known(e.duration_s)) ej["duration_s"] = e.duration_s;
      if (e.kind == EventKind::kRestart) ej["steps_lost"] = e.steps_lost;
      j["events"].push_back(ej);
    }
    j["diagnostics"] = nlohmann::json::array();
    for (const auto& d : run.diagnostics) {
      j["diagnostics"].push_back(
          {{"severity", d.severity == Diagnostic::Severity::kInfo ? "info" : "warning"},
           {"file", d.file},
           {"line", d.line},
           {"message", d.message}});
    }
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  if (format != OutputFormat::kText && format != OutputFormat::kMarkdown)
    throw Error("mfu inspect writes text or json");
  out << fmt::format("format      {}\n", run.format);
  out << fmt::format("inputs      {}\n", fmt::join(run.inputs, ", "));
  out << fmt::format("records     {} ({} iterations, {} timed records)\n", run.iterations.size(),
                     iterations, timed);
  if (!run.iterations.empty())
    out << fmt::format(
        "store       {} for the records ({:.1f} B a record)\n", format_bytes(store_bytes),
        static_cast<double>(store_bytes) / static_cast<double>(run.iterations.size()));
  out << fmt::format("timing      {}\n", timing_name(run.timing));
  if (timed > 0)
    out << fmt::format("time        {} in the timed records\n", format_duration(time_sum));
  if (!run.iterations.empty()) {
    out << fmt::format("steps       {} .. {}\n", run.iterations[0].step,
                       run.iterations.back().step);
  }
  out << fmt::format("fields      {}\n", run.fields.empty()
                                             ? std::string("-")
                                             : fmt::format("{}", fmt::join(run.fields, ", ")));
  if (!run.ranks.empty()) out << fmt::format("ranks       {}\n", fmt::join(run.ranks, ", "));
  write_rank_streams(run, out);
  if (known(run.first_timestamp_s) && known(run.last_timestamp_s))
    out << fmt::format("wall clock  {} between the first and last timestamp\n",
                       format_duration(run.last_timestamp_s - run.first_timestamp_s));
  if (run.malformed_lines > 0)
    out << fmt::format("malformed   {} lines skipped\n", run.malformed_lines);
  if (run.truncated) out << "truncated   yes: the input ends mid-line or mid-stream\n";
  if (!run.meta.all().empty()) {
    out << "metadata\n";
    for (const auto& [k, v] : run.meta.all())
      out << fmt::format("  {:<22} {:<24} ({})\n", k, meta_value(v), v.source);
  }
  if (!run.events.empty()) {
    std::map<std::string, std::pair<int, double>> by;
    for (const auto& e : run.events) {
      auto& s = by[to_string(e.kind)];
      ++s.first;
      if (known(e.duration_s)) s.second += e.duration_s;
    }
    out << "events\n";
    for (const auto& [k, s] : by)
      out << fmt::format("  {:<22} {:>5}   {}\n", k, s.first,
                         s.second > 0 ? format_duration(s.second) + " timed" : "");
  }
  if (!run.diagnostics.empty()) {
    out << "diagnostics\n";
    for (const auto& d : run.diagnostics) {
      out << "  " << d.file;
      if (d.line) out << ':' << d.line;
      out << ": " << d.message << '\n';
    }
    if (run.suppressed_diagnostics > 0)
      out << fmt::format("  ... {} more\n", run.suppressed_diagnostics);
  }
}

}  // namespace mfu
