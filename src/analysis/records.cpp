// Stage 1: field validation. Logs write "not measured" in many ways (-1, 0, a negative timer
// after a clock hiccup); such a field is unknown, never a number the analysis adds up.
#include <fmt/format.h>

#include <cmath>

#include "analysis/parallel.hpp"
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

void drop_invalid_fields(Iteration& it, std::vector<const char*>* invalid) {
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

namespace {

/// What read_records found in one part of the records besides their columns.
struct ReadPart {
  std::size_t timed = 0;
  std::size_t invalid_records = 0;
  std::vector<std::string> warnings;  ///< of the part's first kMaxFieldWarnings invalid records
};

void read_part(const Run& run, std::size_t lo, std::size_t hi, Records& rec, ReadPart& part) {
  const IterationTable& T = run.iterations;
  std::vector<const char*> invalid;
  std::int64_t prev_step = lo > 0 ? T.step(lo - 1) : 0;
  for_each_held_record_in(
      T, lo, hi,
      [&](std::size_t i, Iteration& it) {
        invalid.clear();
        validate(it, &invalid);  // in place: the step the warning names is never changed
        // Every entry is written here: the arrays are not initialized (PerRecord).
        if (!rec.counts.empty()) rec.counts[i] = it.count;
        rec.time[i] = it.time_s;
        std::uint8_t flags = 0;
        if (known(it.time_s))
          ++part.timed;
        else
          flags |= kRecordUntimed;
        if (i == 0 || it.step < prev_step) flags |= kRecordSegmentStart;
        rec.flags[i] = flags;
        prev_step = it.step;
        if (invalid.empty()) return;
        if (++part.invalid_records > kMaxFieldWarnings) return;
        std::string names;
        for (const char* f : invalid) names += (names.empty() ? "" : ", ") + std::string(f);
        part.warnings.push_back(fmt::format(
            "{}: step {}: {}: not a valid measurement (negative, zero or a 'not measured' "
            "sentinel such as -1): treated as unknown",
            record_location(run, i), it.step, names));
      },
      kValidatedFields | RecordFields::kStep);
}

}  // namespace

Records read_records(const Run& run, unsigned threads) {
  const std::size_t n = run.iterations.size();
  Records rec;
  rec.threads = std::max(1u, threads);
  rec.time.resize(n);
  // Counts other than 1 (a record for several iterations) only where the store holds some.
  if (run.iterations.may_hold(RecordFields::kCount)) rec.counts.resize(n);
  rec.flags.resize(n);
  // Each part writes its own records' entries; what else it found is merged in record order
  // (so the parts can be many: the threads take them in turn).
  const Parts parts = parts_of(n, rec.threads, kPartsPerThread);
  std::vector<ReadPart> found(parts.size());
  run_parts(parts, [&](std::size_t p, std::size_t lo, std::size_t hi) {
    ReadPart part;  // on this thread's stack until the part is done (run_parts)
    read_part(run, lo, hi, rec, part);
    found[p] = std::move(part);
  });
  // Ingestion found the restarts with each rank's stream in hand, and some the step counter
  // of the job's table cannot show: a stated restart resumed at the step it died in, or with
  // nothing redone. The counter going back still starts a segment (a run built without
  // ingestion has no restarts_at).
  for (const std::size_t i : run.restarts_at)
    if (i < n) rec.flags[i] |= kRecordSegmentStart;
  std::size_t invalid_records = 0;
  for (ReadPart& part : found) {
    rec.timed += part.timed;
    invalid_records += part.invalid_records;
    for (std::string& w : part.warnings)
      if (rec.warnings.size() < kMaxFieldWarnings) rec.warnings.push_back(std::move(w));
  }
  rec.uniform_count = n > 0 ? rec.count(0) : 1.0;
  for (std::uint32_t c : rec.counts)
    if (c != rec.counts.front()) rec.uniform_count = kUnknown;
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
