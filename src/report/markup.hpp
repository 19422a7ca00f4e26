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

namespace mfu::detail {

/// Text placed in Markdown (a table cell, a list item, a heading): characters that would start
/// markup are escaped, `<` and `>` become entities (no raw HTML reaches a GitHub step summary),
/// and a line break becomes a space, so a log's text can neither end a table row nor start a
/// heading of its own.
[[nodiscard]] inline std::string escape_markdown(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '\n':
      case '\r': o += ' '; break;
      case '\\':
      case '|':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '#':
        o += '\\';
        o += c;
        break;
      default: o += c;
    }
  }
  return o;
}

}  // namespace mfu::detail
