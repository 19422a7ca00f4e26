// One forward pass over an event: every string is a key when it follows '{' or ',' and is
// followed by ':' (spaces allowed around); the value of a wanted key is taken where it starts.
// Tested against a search for each key in the event's text (tests/unit/test_event_fields.cpp).
#include "trace/event_fields.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "text.hpp"

namespace mfu::detail {
namespace {

/// The slot of a wanted key, or nullptr.
std::string_view* slot_for(std::string_view key, EventFields& f) {
  switch (key.size()) {
    case 2:
      if (key == "ph") return &f.ph;
      if (key == "ts") return &f.ts;
      return nullptr;
    case 3:
      if (key == "cat") return &f.cat;
      if (key == "dur") return &f.dur;
      if (key == "pid") return &f.pid;
      if (key == "tid") return &f.tid;
      return nullptr;
    case 4: return key == "name" ? &f.name : nullptr;
    case 5: return key == "flops" ? &f.flops : nullptr;
    case 11: return key == "correlation" ? &f.correlation : nullptr;
    default: return nullptr;
  }
}

/// The closing quote of the string whose characters start at `i` (a backslash escapes the
/// character after it), or ev.size() when it is not closed.
std::size_t string_end(std::string_view ev, std::size_t i) {
  const std::size_t n = ev.size();
  for (;;) {
    if (i >= n) return n;
    i += quote_or_backslash(ev.data() + i, n - i);
    if (i >= n) return n;
    if (ev[i] == '"') return i;
    i += 2;
  }
}

/// The raw value starting at `i` (after the ':' and its spaces): a string's characters, or
/// what runs to the next ',', '}' or space.
std::string_view value_at(std::string_view ev, std::size_t i) {
  if (i >= ev.size()) return {};
  if (ev[i] == '"') return ev.substr(i + 1, string_end(ev, i + 1) - i - 1);
  std::size_t j = i;
  while (j < ev.size() && ev[j] != ',' && ev[j] != '}' && !is_space(ev[j])) ++j;
  return ev.substr(i, j - i);
}

/// The string whose opening quote is at `open` (its closing quote at `close`): when it is a key
/// ('{' or ',' before it, ':' after it), takes its value into its slot of `f` if it is a wanted
/// key not seen before, and returns where its value starts; else returns the position after it.
std::size_t take_string(std::string_view ev, std::size_t open, std::size_t close, EventFields& f) {
  const std::size_t n = ev.size();
  std::size_t before = open;
  while (before > 0 && is_space(ev[before - 1])) --before;
  std::size_t after = close + 1;
  while (after < n && is_space(ev[after])) ++after;
  const bool key = (before == 0 || ev[before - 1] == '{' || ev[before - 1] == ',') && after < n &&
                   ev[after] == ':';
  if (!key) return close + 1;
  std::string_view* slot = slot_for(ev.substr(open + 1, close - open - 1), f);
  std::size_t v = after + 1;
  while (v < n && is_space(ev[v])) ++v;
  if (slot != nullptr && slot->data() == nullptr) {
    *slot = value_at(ev, v);
    // An empty string value still counts as found (a later key of that name is not it).
    if (slot->data() == nullptr) *slot = ev.substr(n);
  }
  return v;
}

/// The bytes the one-pass event reader stops at: quotes and brackets.
constexpr std::array<bool, 256> kEventStops = [] {
  std::array<bool, 256> t{};
  for (const unsigned char c : std::string_view("\"{}[]")) t[c] = true;
  return t;
}();

}  // namespace

EventFields read_event_fields(std::string_view ev) {
  EventFields f;
  const std::size_t n = ev.size();
  std::size_t i = 0;
  while (i < n) {
    const auto* q = static_cast<const char*>(std::memchr(ev.data() + i, '"', n - i));
    if (q == nullptr) break;
    const auto open = static_cast<std::size_t>(q - ev.data());
    const std::size_t close = string_end(ev, open + 1);
    if (close >= n) break;
    i = take_string(ev, open, close, f);
  }
  return f;
}

std::size_t read_event(std::string_view text, EventFields& f) {
  f = EventFields{};
  const std::size_t n = text.size();
  std::size_t depth = 0;
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (!kEventStops[c]) {
      ++i;
      continue;
    }
    if (c == '"') {
      const std::size_t close = string_end(text, i + 1);
      if (close >= n) return 0;
      // A key's value is read where it starts; its brackets, if any, are counted from there.
      i = take_string(text, i, close, f);
    } else if (c == '{' || c == '[') {
      ++depth;
      ++i;
    } else {
      if (depth == 0) return 0;  // not an object's text (a stray closing bracket)
      ++i;
      if (--depth == 0) return i;
    }
  }
  return 0;
}

}  // namespace mfu::detail
