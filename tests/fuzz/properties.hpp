#pragma once
// Properties the fuzz targets check on every input, shared with the regression replay in the
// normal test run (tests/unit/test_fuzz_regressions.cpp). A violated property throws
// PropertyViolation; anything else escaping except mfu::Error is a bug too.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mfu::fuzz {

struct PropertyViolation : std::logic_error {
  using std::logic_error::logic_error;
};

/// Throws PropertyViolation(`what`) unless `ok`.
inline void require(bool ok, const std::string& what) {
  if (!ok) throw PropertyViolation(what);
}

/// Ingests `data` as `format` ("" = detect); checks the run's invariants; analyzes it with a
/// known peak and GPU count and checks the waterfall adds up and MFU is within 0..1; and, for
/// the native formats, that writing the run as native JSON Lines and reading it back gives the
/// same records.
void check_ingest(std::string_view data, const std::string& format);
/// parse_quantity of every kind: finite, non-negative on success, and formatting then parsing
/// again lands within rounding of the value.
void check_quantity(std::string_view data);
/// The fast number reader agrees bit for bit with std::from_chars.
void check_number(std::string_view data);
/// A job trace: parsed, replayed under both placements; makespan, waits, utilisation and
/// fragmentation are within their bounds.
void check_jobs(std::string_view data);

/// Bytes read as records of several ranks (tagged or not, in files, with restarts, repeats and
/// stated restarts): combining their streams on the fast paths gives the reference path's job
/// records, counts and rank summaries bit for bit.
void check_rank_streams(std::string_view data);

/// The target names and what each runs (the format for ingest targets).
struct Target {
  std::string name;
  std::string format;  ///< for ingest targets
  void (*check)(std::string_view) = nullptr;
};
[[nodiscard]] const std::vector<Target>& targets();
/// Runs target `name` on `data`.
void run_target(const std::string& name, std::string_view data);

}  // namespace mfu::fuzz
