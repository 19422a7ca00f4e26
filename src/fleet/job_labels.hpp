#pragma once
// Labels that group a fleet's jobs: from a path pattern ("runs/{team}/{job}/") and from a job
// table (a CSV whose first column names the job: its file or directory name, or {job}).

#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace mfu::detail {

class JobLabels {
 public:
  /// `pattern`: "" for none; each {key} matches one path component. `table`: "" for none.
  JobLabels(const std::string& pattern, const std::string& table);

  /// key -> value for the job at `path` ("unmatched" where the pattern or table does not say).
  [[nodiscard]] std::map<std::string, std::string> of(const std::string& path) const;

 private:
  std::vector<std::string> pattern_keys_;
  std::optional<std::regex> pattern_;
  std::vector<std::string> table_keys_;                   // the table's columns after the first
  std::map<std::string, std::vector<std::string>> rows_;  // job id -> its values
};

}  // namespace mfu::detail
