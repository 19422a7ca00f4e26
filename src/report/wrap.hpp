#pragma once
// Word wrapping for the screen reports: lines fit the terminal's width (or 100 columns).

#include <string>
#include <string_view>

namespace mfu::detail {

/// Columns `s` takes on a terminal: its UTF-8 code points (no ANSI codes expected).
[[nodiscard]] inline std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

/// `text` broken at spaces into lines of at most `width` columns, the first starting with
/// `first`, the others with `rest`; each line ends with '\n'. A word longer than a line (a
/// path) stands alone on its line, unbroken.
[[nodiscard]] inline std::string wrap(std::string_view text, std::size_t width,
                                      std::string_view first, std::string_view rest) {
  std::string out(first);
  std::size_t col = display_width(first);
  const std::size_t indent = display_width(rest);
  bool line_empty = true;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const std::size_t j = std::min(text.find(' ', i), text.size());
    if (j == i) break;
    const std::string_view word = text.substr(i, j - i);
    const std::size_t w = display_width(word);
    if (!line_empty && col + 1 + w > width) {
      out += '\n';
      out += rest;
      col = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++col;
    }
    out += word;
    col += w;
    line_empty = false;
    i = j;
  }
  out += '\n';
  return out;
}

}  // namespace mfu::detail
