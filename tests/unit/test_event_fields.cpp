// The trace reader's one-pass field extractor (src/trace/event_fields.cpp) against the way it
// read fields before: a search of the event's text for each key, from its start, accepting the
// first match that stands where a key stands. Both must give the same text for every field of
// every event: real traces (as their writers laid them out and re-laid by nlohmann), and
// generated events with the fields in random order, nested copies of the keys in "args",
// escapes, spaces and empty values.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "text.hpp"
#include "trace/event_fields.hpp"

namespace mfu::detail {
namespace {

/// JSON's four spaces and the form feed and vertical tab the old search also skipped.
bool space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/// The reference: the first occurrence of "key" preceded by '{' or ',' and followed by ':'.
std::string_view searched_value(std::string_view ev, std::string_view name) {
  std::string key(1, '"');
  key.append(name).push_back('"');
  std::size_t from = 0;
  while (true) {
    const std::size_t p = ev.find(key, from);
    if (p == std::string_view::npos) return {};
    from = p + key.size();
    std::size_t b = p;
    while (b > 0 && space(ev[b - 1])) --b;
    if (b > 0 && ev[b - 1] != '{' && ev[b - 1] != ',') continue;
    std::size_t i = from;
    while (i < ev.size() && space(ev[i])) ++i;
    if (i >= ev.size() || ev[i] != ':') continue;
    ++i;
    while (i < ev.size() && space(ev[i])) ++i;
    if (i >= ev.size()) return {};
    if (ev[i] == '"') {
      std::size_t j = i + 1;
      while (j < ev.size() && ev[j] != '"') j += ev[j] == '\\' ? 2 : 1;
      return ev.substr(i + 1, std::min(j, ev.size()) - i - 1);
    }
    std::size_t j = i;
    while (j < ev.size() && ev[j] != ',' && ev[j] != '}' && !space(ev[j])) ++j;
    return ev.substr(i, j - i);
  }
}

/// Compares every field; returns the number of events compared.
void expect_same_fields(const std::string& ev) {
  const EventFields f = read_event_fields(ev);
  const std::pair<const char*, std::string_view> got[] = {
      {"ph", f.ph},      {"cat", f.cat}, {"name", f.name}, {"ts", f.ts},
      {"dur", f.dur},    {"pid", f.pid}, {"tid", f.tid},   {"correlation", f.correlation},
      {"flops", f.flops}};
  for (const auto& [key, value] : got)
    EXPECT_EQ(value, searched_value(ev, key)) << key << " in " << ev;
}

std::size_t compare_trace_events(const std::filesystem::path& path) {
  std::ifstream in(path);
  const auto doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded()) return 0;
  const auto& events = doc.is_array() ? doc : doc.value("traceEvents", nlohmann::json::array());
  std::size_t n = 0;
  for (const auto& e : events) {
    expect_same_fields(e.dump());
    expect_same_fields(e.dump(1));  // newlines and indentation around every key
    ++n;
  }
  return n;
}

TEST(EventFields, RealTraceEventsGiveWhatTheSearchGave) {
  std::size_t n = compare_trace_events(test::test_data("pytorch113_legacy_profiler_trace.json"));
  const auto next = test::samples_next_dir();
  if (next.empty()) {
    MFU_FAIL_WITHOUT_INPUT("../shared/samples-next is not here");
  } else {
    for (const auto& entry : std::filesystem::directory_iterator(next / "kineto_trace"))
      if (entry.path().extension() == ".json") n += compare_trace_events(entry.path());
  }
  EXPECT_GT(n, 1000U);
}

/// A random event: the fields in random order, some missing, some repeated inside "args"
/// (Kineto keeps "correlation" there), strings with escaped quotes and backslashes, spaces.
std::string random_event(std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const char* keys[] = {"ph",          "cat",  "name",        "ts",  "dur", "pid",  "tid",
                        "correlation", "args", "External id", "phx", "xts", "flops"};
  const char* strings[] = {"X", "kernel", "", "ncclKernel_AllReduce", "a \\\"quoted\\\" name",
                           "back\\\\slash", "{\\\"ts\\\": 1}", "ProfilerStep#4", "cpu_op",
                           // Long strings (a kernel's name is 100 bytes and more) with escaped
                           // quotes and runs of backslashes past the first 16 and 32 bytes,
                           // where the reader's scan takes its next 16-byte step.
                           "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_kernel",
                           "void at::native::elementwise_kernel<128, 4, \\\"lambda\\\">(int)",
                           "0123456789012345678901234\\\\\\\\\", \"ts\": 5, \"x\": \"",
                           "0123456789012345678901\\\\", "01234567890123456789012\\\"\\\\",
                           "0123456789012345678901234567\\\\\\\\\\\"tail"};
  const char* numbers[] = {"0", "12", "4458676983543.183", "-1", "1e3", "68.0"};
  const char* spaces[] = {"", " ", "  ", "\n", "\t ", "\f", "\v\r"};
  std::string ev = "{";
  const std::size_t fields = pick(9);
  for (std::size_t k = 0; k < fields; ++k) {
    if (k > 0) ev += ",";
    ev += spaces[pick(7)];
    const std::string_view key = keys[pick(13)];
    ev.append(1, '"').append(key).append(1, '"').append(spaces[pick(7)]);
    ev.append(1, ':').append(spaces[pick(7)]);
    if (key == "args") {
      ev.append("{\"correlation\": ").append(numbers[pick(6)]).append(", \"flops\": 7, \"ts\": \"");
      ev.append(strings[pick(15)]).append("\"}");
    } else if (pick(2) == 0) {
      ev.append(1, '"').append(strings[pick(15)]).append(1, '"');
    } else {
      ev += numbers[pick(6)];
    }
    ev += spaces[pick(7)];
  }
  return ev + "}";
}

TEST(EventFields, GeneratedEventsGiveWhatTheSearchGave) {
  std::mt19937_64 rng(29);
  for (int i = 0; i < 20000; ++i) expect_same_fields(random_event(rng));
}

// The comparison can fail: a field the extractor would read from a later occurrence (here the
// reference is asked for the second "ts") differs.
TEST(EventFields, TheComparisonSeesAWrongOccurrence) {
  const std::string ev = R"({"args": {"ts": 5}, "ts": 7, "cat": "kernel"})";
  EXPECT_EQ(read_event_fields(ev).ts, "5");
  EXPECT_NE(read_event_fields(ev).ts, searched_value(ev.substr(ev.find("\"ts\": 7")), "ts"));
  EXPECT_EQ(read_event_fields(ev).cat, "kernel");
  EXPECT_TRUE(read_event_fields(ev).name.empty());
}

/// Where the object that `text` starts with ends, as a JSON value scan finds it (strings
/// skipped with their escapes, brackets of both kinds counted): its length, 0 when not closed.
std::size_t reference_end(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return 0;
}

bool same_field(std::string_view a, std::string_view b) {
  return a == b && (a.data() == nullptr) == (b.data() == nullptr);  // found, or not
}

/// read_event on an event followed by what comes after it in a trace: the event's length, and
/// the fields read_event_fields gives for the event alone; a cut before its end is no event.
void expect_same_event(const std::string& ev, std::string_view after, bool every_cut) {
  const std::string text = ev + std::string(after);
  ASSERT_EQ(reference_end(text), ev.size()) << ev;
  EventFields got;
  ASSERT_EQ(read_event(text, got), ev.size()) << text;
  const EventFields want = read_event_fields(ev);
  const std::pair<std::string_view, std::string_view> fields[] = {
      {got.ph, want.ph},      {got.cat, want.cat},
      {got.name, want.name},  {got.ts, want.ts},
      {got.dur, want.dur},    {got.pid, want.pid},
      {got.tid, want.tid},    {got.correlation, want.correlation},
      {got.flops, want.flops}};
  for (const auto& [a, b] : fields)
    EXPECT_TRUE(same_field(a, b)) << a << " vs " << b << " in " << ev;
  for (std::size_t cut = 0; cut < ev.size(); cut += every_cut ? 1 : 1 + ev.size() / 7) {
    EventFields part;
    EXPECT_EQ(read_event(std::string_view(text).substr(0, cut), part), 0u) << cut << " of " << ev;
  }
}

/// What may follow an event in a trace: the next event, the end of the array, spaces.
constexpr std::string_view kAfter[] = {"",   ",", "]}", " ,\n  {\"ph\": \"X\", \"ts\": 1}",
                                       "}]", "{"};

TEST(EventFields, OnePassEventsEndWhereAScanEndsThemWithTheSameFields) {
  std::mt19937_64 rng(31);
  for (int i = 0; i < 20000; ++i) expect_same_event(random_event(rng), kAfter[i % 6], i % 50 == 0);
  // Arrays, nested objects and brackets inside strings in the arguments.
  for (const std::string ev :
       {R"({"args": {"dims": [[1, 2], [3]], "ts": "]"}, "ph": "X", "ts": 5})",
        R"({"ph":"X","args":{"list":[{"ts":3},"}",[]],"flops":2},"dur":[1,{"x":"{"}]})",
        R"({"name": "a\"}b", "cat": "kernel", "args": {}})", R"({})", R"({"ts":[]})"}) {
    for (const std::string_view after : kAfter) expect_same_event(ev, after, true);
  }
}

TEST(EventFields, RealEventsReadInOnePassGiveTheSameFields) {
  std::ifstream in(test::test_data("pytorch113_legacy_profiler_trace.json"));
  const auto doc = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  std::size_t n = 0;
  for (const auto& e : doc.is_array() ? doc : doc.value("traceEvents", nlohmann::json::array())) {
    expect_same_event(e.dump(), kAfter[n % 6], false);
    expect_same_event(e.dump(1), kAfter[(n + 1) % 6], false);
    ++n;
  }
  EXPECT_GT(n, 100u);
}

}  // namespace
}  // namespace mfu::detail

// The 16-byte scan against a byte loop: a quote or a backslash at every position of strings
// of every length up to 48 (three steps and a tail), with other bytes of every value around
// it, and a string of neither; the scan never looks past the bytes it is given (the copies
// here end exactly there, so ASan sees any read beyond).
TEST(EventFields, QuoteOrBackslashMatchesAByteLoop) {
  for (std::size_t n = 0; n <= 48; ++n) {
    for (std::size_t at = 0; at <= n; ++at) {
      for (const char c : {'"', '\\', 'x'}) {
        std::string s(n, 'a');
        for (std::size_t k = 0; k < n; ++k)
          s[k] = static_cast<char>(k * 37 % 256 == '"' || k * 37 % 256 == '\\' ? 'b' : k * 37);
        if (at < n) s[at] = c;
        const auto heap = std::make_unique<char[]>(n);
        std::copy(s.begin(), s.end(), heap.get());
        std::size_t want = 0;
        while (want < n && s[want] != '"' && s[want] != '\\') ++want;
        EXPECT_EQ(mfu::detail::quote_or_backslash(heap.get(), n), want)
            << "n " << n << " at " << at << " char " << c;
      }
    }
  }
}
