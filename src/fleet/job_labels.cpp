#include "fleet/job_labels.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "io/csv.hpp"
#include "mfu/error.hpp"

namespace mfu::detail {

JobLabels::JobLabels(const std::string& pattern, const std::string& table) {
  if (!pattern.empty()) {
    // Literal text is escaped; each {key} is one path component; a trailing '/' lets the job's
    // own path go on (runs/{team}/ matches runs/vision/job7.log).
    std::string re;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] == '{') {
        const std::size_t close = pattern.find('}', i);
        if (close == std::string::npos)
          throw Error(fmt::format("the grouping pattern '{}' has a '{{' without '}}'", pattern));
        pattern_keys_.push_back(pattern.substr(i + 1, close - i - 1));
        re += "([^/]+)";
        i = close;
      } else {
        if (std::string("\\^$.|?*+()[]").find(pattern[i]) != std::string::npos) re += '\\';
        re += pattern[i];
      }
    }
    if (pattern_keys_.empty())
      throw Error(fmt::format("the grouping pattern '{}' names no {{key}}", pattern),
                  "write it like 'runs/{team}/{job}/'");
    pattern_ = std::regex("(?:^|.*/)" + re + (pattern.back() == '/' ? ".*" : ""));
  }
  if (table.empty()) return;
  std::ifstream in(table);
  if (!in) throw Error(fmt::format("cannot open the job table '{}'", table), "check the path");
  std::string line;
  if (!std::getline(in, line)) throw Error(fmt::format("the job table '{}' is empty", table));
  if (!line.empty() && line.back() == '\r') line.pop_back();  // a table saved on Windows
  const auto header = split_csv(line);
  table_keys_.assign(header.begin() + 1, header.end());
  for (std::size_t n = 2; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto cells = split_csv(line);
    if (cells.size() != header.size())
      throw Error(fmt::format("{}:{}: {} fields, the header has {}", table, n, cells.size(),
                              header.size()));
    rows_[cells.front()].assign(cells.begin() + 1, cells.end());
  }
}

std::map<std::string, std::string> JobLabels::of(const std::string& path) const {
  std::map<std::string, std::string> out;
  std::smatch m;
  const bool matched = pattern_ && std::regex_match(path, m, *pattern_);
  for (std::size_t k = 0; k < pattern_keys_.size(); ++k)
    out[pattern_keys_[k]] = matched ? m[static_cast<int>(k) + 1].str() : "unmatched";
  if (table_keys_.empty()) return out;
  // The job's id: {job} from the pattern, else its file name without the extension (or the
  // directory's name).
  const std::filesystem::path p(path);
  std::string id = out.count("job") ? out["job"] : p.stem().string();
  if (id.empty()) id = p.parent_path().filename().string();
  const auto row = rows_.find(id);
  for (std::size_t k = 0; k < table_keys_.size(); ++k)
    out[table_keys_[k]] = row == rows_.end() ? "unmatched" : row->second[k];
  return out;
}

}  // namespace mfu::detail
