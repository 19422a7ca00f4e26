#include "ingest/flat_dict.hpp"

#include "text.hpp"

namespace mfu::detail {

std::optional<std::vector<FlatValue>> parse_flat_dict(std::string_view s) {
  s = trim(s);
  if (s.size() < 2 || s.front() != '{') return std::nullopt;
  std::vector<FlatValue> out;
  std::size_t i = 1;
  auto skip_ws = [&] {
    while (i < s.size() && is_space(s[i])) ++i;
  };
  auto read_quoted = [&](std::string& dst) -> bool {
    const char q = s[i];
    ++i;
    while (i < s.size() && s[i] != q) {
      if (s[i] == '\\' && i + 1 < s.size()) {
        dst.push_back(s[i + 1]);
        i += 2;
        continue;
      }
      dst.push_back(s[i++]);
    }
    if (i >= s.size()) return false;
    ++i;
    return true;
  };
  for (;;) {
    skip_ws();
    if (i >= s.size()) return std::nullopt;
    if (s[i] == '}') break;
    if (s[i] == ',') {
      ++i;
      continue;
    }
    FlatValue v;
    if (s[i] != '\'' && s[i] != '"') return std::nullopt;
    if (!read_quoted(v.key)) return std::nullopt;
    skip_ws();
    if (i >= s.size() || s[i] != ':') return std::nullopt;
    ++i;
    skip_ws();
    if (i >= s.size()) return std::nullopt;
    if (s[i] == '\'' || s[i] == '"') {
      if (!read_quoted(v.text)) return std::nullopt;
    } else if (s[i] == '{' || s[i] == '[' || s[i] == '(') {
      // Nested value: skip to its matching bracket.
      int depth = 0;
      char quote = 0;
      for (; i < s.size(); ++i) {
        const char c = s[i];
        if (quote) {
          if (c == quote) quote = 0;
          continue;
        }
        if (c == '\'' || c == '"')
          quote = c;
        else if (c == '{' || c == '[' || c == '(')
          ++depth;
        else if (c == '}' || c == ']' || c == ')') {
          if (--depth == 0) {
            ++i;
            break;
          }
        }
      }
      continue;
    } else {
      const std::size_t start = i;
      while (i < s.size() && s[i] != ',' && s[i] != '}') ++i;
      v.text = std::string(trim(s.substr(start, i - start)));
    }
    if (auto d = parse_double(v.text))
      v.number = d;
    else if (v.text == "True" || v.text == "true")
      v.number = 1.0;
    else if (v.text == "False" || v.text == "false")
      v.number = 0.0;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace mfu::detail
