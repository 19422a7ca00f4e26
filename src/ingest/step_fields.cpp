// The field table of the generic reader (see step_fields.hpp).
#include "ingest/step_fields.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "text.hpp"

namespace mfu::detail {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_space(char c) {
  return c == ' ' || c == '\t';
}

/// A field cut from the line: its key (normalised: lower case, '_' for spaces, '-' and '/'),
/// the unit in its key's parentheses or after its number, and the number.
struct RawField {
  std::string key, unit;
  double value = 0;
  bool percent = false;
};

std::string normalise(std::string_view s) {
  std::string out;
  for (char c : trim(s)) {
    const char l = lower(c);
    if (l == ' ' || l == '-' || l == '/' || l == '.') {
      if (!out.empty() && out.back() != '_') out.push_back('_');
    } else if (l != ':' && l != '=' && l != '[' && l != ']') {
      out.push_back(l);
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

/// The key before a number: the text since the previous field, without a logger's prefix
/// ("INFO:root:Step" -> "Step") and with its parenthesised unit taken out ("iter time (s)").
std::string key_of(std::string_view key, std::string& unit) {
  key = trim(key);
  while (!key.empty() && (key.back() == ':' || key.back() == '=' || key.back() == ' ' ||
                          key.back() == '[' || key.back() == '('))
    key.remove_suffix(1);
  if (const std::size_t open = key.rfind('('); open != std::string_view::npos) {
    const std::size_t close = key.find(')', open);
    if (close != std::string_view::npos && close + 1 >= key.size()) {
      unit = std::string(trim(key.substr(open + 1, close - open - 1)));
      key = key.substr(0, open);
    }
  }
  if (const std::size_t colon = key.rfind(':'); colon != std::string_view::npos)
    key = key.substr(colon + 1);
  return normalise(key);
}

/// The fields of one segment: "Epoch[0] Batch [43900]" holds two; "step 00000001/00000015"
/// one (the total after '/' is part of it); "5.59 seconds/step" one with only a unit.
void segment_fields(std::string_view seg, std::vector<RawField>& out) {
  std::size_t from = 0;
  while (from < seg.size() && out.size() < 64) {
    std::size_t p = from;
    while (p < seg.size() && !(is_digit(seg[p]) || ((seg[p] == '-' || seg[p] == '.') &&
                                                    p + 1 < seg.size() && is_digit(seg[p + 1]))))
      ++p;
    if (p == seg.size()) return;
    if (p > 0 && (is_alpha(seg[p - 1]) || seg[p - 1] == '_')) {  // "fp16", "gpt2"
      while (p < seg.size() && !is_space(seg[p])) ++p;
      from = p;
      continue;
    }
    RawField f;
    f.key = key_of(seg.substr(from, p - from), f.unit);
    std::string_view rest = seg.substr(p);
    const auto v = take_number(rest, true);
    if (!v) return;
    f.value = *v;
    if (starts_with(rest, "/") && rest.size() > 1 && is_digit(rest[1])) {  // "400/12000"
      rest.remove_prefix(1);
      (void)take_number(rest, true);
    }
    const std::string_view after = trim(rest);
    f.percent = starts_with(after, "%");
    std::size_t consumed = 0;  // of `after`: the unit word
    if (f.unit.empty() && !after.empty() && !is_digit(after[0])) {
      const std::size_t word = std::min(after.find(' '), after.size());
      // A word followed by a number is the next field's key ("step 5 loss 2.3"), not a unit.
      const std::string_view next = trim(after.substr(word));
      const bool key_of_next = !next.empty() && (is_digit(next[0]) || next[0] == '-');
      if (!key_of_next) {
        f.unit = std::string(after.substr(0, word));
        consumed = word;
      }
    }
    from = seg.size() - after.size() + consumed;
    out.push_back(std::move(f));
  }
}

std::vector<RawField> raw_fields(std::string_view line) {
  std::vector<RawField> out;
  out.reserve(16);  // a log line's fields, without growing the vector 4 times
  std::size_t start = 0;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    const bool end = i == line.size();
    const char c = end ? '\0' : line[i];
    const bool sep = end || c == '|' || c == ';' || c == '\t' ||
                     (c == ',' && i + 1 < line.size() && line[i + 1] == ' ') ||
                     (c == ' ' && i + 1 < line.size() && line[i + 1] == ' ');
    if (!sep) continue;
    if (i > start) segment_fields(line.substr(start, i - start), out);
    start = i + 1;
  }
  return out;
}

// Names as string_views, whose lengths are known when compiled: a name of another length is
// passed over without reading it (with const char* names, strlen ran on every one: 57 calls per
// field, a third of the time format detection spent on a Megatron log's head, callgrind).
bool one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  for (const std::string_view n : names)
    if (s == n) return true;
  return false;
}

/// Seconds per unit ("s", "sec", "ms", ...); 0 when the unit is not a time.
double seconds_per(std::string_view unit) {
  const std::string u = normalise(unit);
  if (one_of(u, {"s", "sec", "secs", "second", "seconds"})) return 1;
  if (one_of(u, {"ms", "msec", "millisecond", "milliseconds"})) return 1e-3;
  if (one_of(u, {"us", "µs"})) return 1e-6;
  if (one_of(u, {"min", "mins", "minutes"})) return 60;
  return 0;
}

MatchedField named(const RawField& f, double value) {
  return {f.key.empty() ? f.unit : f.key, value};
}

/// A field's role, by its key, or by its unit where it has no key.
void classify(const RawField& f, StepFields& out) {
  const std::string& k = f.key;
  const std::string u = normalise(f.unit);
  if (one_of(k, {"step", "steps", "iter", "iteration", "it", "global_step", "batch", "batch_id",
                 "num_updates", "update", "train_step"})) {
    // A whole number in range (a cast of 1e59 to an integer is undefined: fuzzing found it).
    if (!out.step && f.value >= 0 && f.value < 9e15 && f.value == std::floor(f.value))
      out.step = named(f, f.value);
    return;
  }
  if (one_of(u, {"s_it", "sec_it", "seconds_step", "sec_step", "s_step", "seconds_it"})) {
    out.time_s = named(f, f.value);
    return;
  }
  if (one_of(u, {"ms_step", "ms_it", "ms_iter"})) {
    out.time_s = named(f, f.value / 1000);
    return;
  }
  if (one_of(u, {"tok_s", "tokens_s", "tokens_sec", "wps", "words_s", "tok_sec"})) {
    out.tokens_per_s = named(f, f.value);
    return;
  }
  if (one_of(u, {"samples_s", "samples_sec", "examples_s", "examples_second", "ins_s", "img_s",
                 "images_s", "it_s", "seq_s"})) {
    out.samples_per_s = named(f, f.value);
    return;
  }
  const double unit_s = seconds_per(f.unit);
  if (one_of(k, {"time", "step_time", "iter_time", "iteration_time", "train_step_timing",
                 "batch_time", "time_per_step", "step_duration", "avg_batch_cost", "batch_cost",
                 "dt", "elapsed_time_per_iteration", "time_per_iteration"})) {
    out.time_s = named(f, f.value * (unit_s > 0 ? unit_s : 1));
  } else if (one_of(k, {"elapsed", "wall", "elapsed_time", "total_time", "time_elapsed", ""}) &&
             unit_s > 0) {
    out.elapsed_s = named(f, f.value * unit_s);
  } else if (one_of(k, {"tgs", "tokens_per_second_per_gpu", "tokens_per_sec_per_gpu",
                        "tokens_s_gpu", "tokens_per_second_per_device", "tps"})) {
    out.tokens_per_s_per_gpu = named(f, f.value);
  } else if (one_of(k, {"tokens_per_second", "tokens_per_sec", "tok_s", "wps", "tokens_s",
                        "throughput_tokens"})) {
    out.tokens_per_s = named(f, f.value);
  } else if (one_of(k, {"samples_per_second", "samples_per_sec", "samples_s", "sps", "ips"})) {
    out.samples_per_s = named(f, f.value);
  } else if (contains(k, "tflops") || contains(k, "tflop_s")) {
    out.tflops_per_gpu = named(f, f.value);
  } else if (k == "mfu") {
    out.mfu = named(f, f.percent || f.value > 1 ? f.value / 100 : f.value);
  } else if (!out.loss && one_of(k, {"loss", "lm_loss", "train_loss", "cross_entropy_loss",
                                     "total_loss", "train_lm_loss"})) {
    out.loss = named(f, f.value);
  }
}

}  // namespace

std::string StepFields::signature() const {
  std::string s;
  auto add = [&](const char* role, const std::optional<MatchedField>& f) {
    if (f) s += fmt::format("{}{}={}", s.empty() ? "" : " ", role, f->name);
  };
  add("step", step);
  add("time", time_s);
  add("elapsed", elapsed_s);
  add("tokens/s", tokens_per_s);
  add("tokens/s/gpu", tokens_per_s_per_gpu);
  add("samples/s", samples_per_s);
  add("tflops", tflops_per_gpu);
  add("mfu", mfu);
  add("loss", loss);
  return s;
}

StepFields read_step_fields(std::string_view line) {
  StepFields out;
  for (const auto& f : raw_fields(line)) classify(f, out);
  return out;
}

}  // namespace mfu::detail
