// Stage 1: field validation. Logs write "not measured" in many ways (-1, 0, a negative timer
// after a clock hiccup); such a field is unknown, never a number the analysis adds up.
#include <fmt/format.h>

#include <cmath>

#include "analysis/stages.hpp"

namespace mfu::detail {
namespace {

constexpr std::size_t kMaxFieldWarnings = 8;

void check_positive(double& v, const char* name, std::vector<const char*>* invalid) {
  if (!known(v) || valid_positive(v)) return;
  v = kUnknown;
  if (invalid) invalid->push_back(name);
}

std::string where(const Run& run, std::uint16_t file, std::uint32_t line) {
  const std::string f = file < run.inputs.size() ? run.inputs[file] : std::string("input");
  return line > 0 ? fmt::format("{}:{}", f, line) : f;
}

}  // namespace

std::string inputs_list(const Analysis& a) {
  std::string s;
  for (const auto& u : a.used) s += fmt::format("{}={} ({}); ", u.name, u.value, u.source);
  return s;
}

std::string record_location(const Run& run, std::size_t i) {
  return where(run, run.iterations.file(i), run.iterations.line(i));
}

void validate(Iteration& it, std::vector<const char*>* invalid) {
  check_positive(it.time_s, "time", invalid);
  check_positive(it.tokens, "tokens", invalid);
  check_positive(it.samples, "samples", invalid);
  check_positive(it.model_flops, "model_flops", invalid);
  check_positive(it.reported_flops_per_gpu, "the printed FLOP/s", invalid);
  check_positive(it.reported_mfu, "the printed MFU", invalid);
  if (it.count == 0) it.count = 1;
  for (std::size_t p = 0; p < kPhaseCount; ++p) {
    double& v = it.phase[p];
    if (known(v) && !valid_phase(v)) {
      v = kUnknown;
      if (invalid) invalid->push_back(phase_key(static_cast<Phase>(p)));
    }
  }
}

Iteration validated(const Iteration& in, std::vector<const char*>* invalid) {
  Iteration it = in;
  validate(it, invalid);
  return it;
}

Records read_records(const Run& run) {
  const IterationTable& T = run.iterations;
  const std::size_t n = T.size();
  Records rec;
  rec.time.assign(n, kUnknown);
  rec.count.assign(n, 1);
  rec.flags.assign(n, 0);
  std::size_t invalid_records = 0;
  std::vector<const char*> invalid;
  std::int64_t prev_step = 0;
  for_each_record(T, [&](std::size_t i, const Iteration& raw) {
    invalid.clear();
    const Iteration it = validated(raw, &invalid);
    rec.count[i] = it.count;
    if (known(it.time_s)) {
      rec.time[i] = it.time_s;
      ++rec.timed;
    } else {
      rec.flags[i] |= kRecordUntimed;
    }
    if (i == 0 || it.step < prev_step) rec.flags[i] |= kRecordSegmentStart;
    prev_step = it.step;
    if (invalid.empty()) return;
    if (++invalid_records > kMaxFieldWarnings) return;
    std::string names;
    for (const char* f : invalid) names += (names.empty() ? "" : ", ") + std::string(f);
    rec.warnings.push_back(
        fmt::format("{}: step {}: {}: not a valid measurement (negative, zero or a 'not measured' "
                    "sentinel such as -1): treated as unknown",
                    where(run, raw.file, raw.line), raw.step, names));
  });
  rec.uniform_count = n > 0 ? rec.count.front() : 1.0;
  for (std::uint32_t c : rec.count)
    if (c != rec.count.front()) rec.uniform_count = kUnknown;
  if (invalid_records > kMaxFieldWarnings)
    rec.warnings.push_back(fmt::format("... and {} more records with invalid fields",
                                       invalid_records - kMaxFieldWarnings));
  for (const auto& e : run.events)
    if (known(e.duration_s) && !(std::isfinite(e.duration_s) && e.duration_s >= 0))
      rec.warnings.push_back(fmt::format("{}: {} event with duration {} s: treated as unknown",
                                         where(run, e.file, e.line), to_string(e.kind),
                                         e.duration_s));
  return rec;
}

}  // namespace mfu::detail
