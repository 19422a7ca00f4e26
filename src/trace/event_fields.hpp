#pragma once
// The fields of a profiler trace event the reader uses, read in one forward pass over the
// event's text (the pass visits each key once instead of searching the event again for each
// field: that search was 60% of the time to read a trace).

#include <string_view>

namespace mfu::detail {

/// For each field, the raw text of the value of its first occurrence as a key at any depth of
/// the event (Kineto puts "correlation" inside "args"): a string's characters between its
/// quotes (escapes kept), a number's digits; an empty view when the key is absent.
struct EventFields {
  std::string_view ph, cat, name, ts, dur, pid, tid, correlation;
  std::string_view flops;  ///< a CPU operator's FLOP count (profiled with_flops=True)
};

/// Reads the fields of one event object's text.
[[nodiscard]] EventFields read_event_fields(std::string_view ev);

/// Reads the fields of the event object that `text` starts with ('{') and finds where it ends,
/// in the same pass: the length of the event's text through its closing brace, with `f` what
/// read_event_fields gives for that text; 0 when `text` ends before the event does (`f` is then
/// unspecified). Strings and nesting are skipped as JSON has them; nothing else is validated.
[[nodiscard]] std::size_t read_event(std::string_view text, EventFields& f);

}  // namespace mfu::detail
