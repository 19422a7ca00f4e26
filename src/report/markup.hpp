#pragma once
// Escaping for text placed in HTML and XML (the HTML report, JUnit XML).

#include <string>
#include <string_view>

namespace mfu::detail {

/// Escapes the five markup characters; control characters other than tab and newline, which
/// XML 1.0 forbids, become spaces.
[[nodiscard]] inline std::string escape_markup(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') ? ' ' : c;
    }
  }
  return o;
}

}  // namespace mfu::detail
