#pragma once
// Minimal CSV field splitting (RFC 4180 quotes) for the CSV-based formats.
#include <string>
#include <string_view>
#include <vector>

namespace mfu::detail {

/// Splits one CSV line into fields, handling double-quoted fields with "" escapes.
inline std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(std::move(cur));
  return out;
}

}  // namespace mfu::detail
