// --pattern REGEX: the user's own regular expression (ECMAScript) with named groups for the
// fields of a step line, for logs no parser reads:
//   (?<step>...) (required), (?<time_s>...) or (?<time_ms>...) one step's time,
//   (?<elapsed_s>...) seconds since the start, (?<tokens>...) tokens of the step,
//   (?<tokens_per_s>...), (?<samples>...), (?<samples_per_s>...), (?<tflops_per_gpu>...),
//   (?<mfu>...) in percent, (?<loss>...).
// std::regex has no named groups: the names are taken out and each maps to its capture's
// number. A line that matches is a record; other lines are skipped.
#include <fmt/format.h>

#include <map>
#include <regex>

#include "ingest/parser.hpp"
#include "mfu/error.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

constexpr const char* kGroups[] = {"step",           "time_s",       "time_ms", "elapsed_s",
                                   "tokens",         "tokens_per_s", "samples", "samples_per_s",
                                   "tflops_per_gpu", "mfu",          "loss"};

/// The pattern without its group names, and the capture number of each name.
struct CompiledPattern {
  std::regex re;
  std::map<std::string, std::size_t> group;
};

CompiledPattern compile(const std::string& pattern) {
  CompiledPattern c;
  std::string plain;
  std::size_t captures = 0;
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char ch = pattern[i];
    if (ch == '\\' && i + 1 < pattern.size()) {
      plain += pattern.substr(i, 2);
      ++i;
      continue;
    }
    if (in_class) {
      in_class = ch != ']';
      plain.push_back(ch);
      continue;
    }
    if (ch == '[') in_class = true;
    if (ch == '(' && pattern.compare(i + 1, 2, "?<") == 0 && i + 3 < pattern.size() &&
        pattern[i + 3] != '=' && pattern[i + 3] != '!') {
      const std::size_t close = pattern.find('>', i + 3);
      if (close == std::string::npos) throw Error("the pattern has a group name without '>'");
      const std::string name = pattern.substr(i + 3, close - i - 3);
      bool known_name = false;
      for (const char* g : kGroups) known_name = known_name || name == g;
      if (!known_name)
        throw Error(fmt::format("the pattern names a group '{}' that mfu does not read", name),
                    fmt::format("use the groups {}", fmt::join(kGroups, ", ")));
      c.group[name] = ++captures;
      plain.push_back('(');
      i = close;
      continue;
    }
    if (ch == '(' && !(i + 1 < pattern.size() && pattern[i + 1] == '?')) ++captures;
    plain.push_back(ch);
  }
  if (!c.group.count("step"))
    throw Error("the pattern has no (?<step>...) group: a record needs its step",
                "name the step counter's digits, e.g. 'iter (?<step>\\d+)'");
  try {
    c.re = std::regex(plain, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    throw Error(fmt::format("the pattern is not a valid regular expression: {}", e.what()));
  }
  return c;
}

class PatternParser : public LineParser {
 public:
  explicit PatternParser(RunBuilder& out) : out_(out), p_(compile(out.options.pattern)) {}

  void line(std::string_view raw, std::uint64_t number) override {
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(raw.begin(), raw.end(), m, p_.re)) return;
    const auto step = group(m, "step");
    if (!step || *step < 0) {
      out_.malformed(number, "the pattern matched, but its step group is not a number");
      return;
    }
    Iteration it;
    it.step = as_step(*step);
    it.line = static_cast<std::uint32_t>(number);
    if (auto v = group(m, "time_s")) it.time_s = *v;
    if (auto v = group(m, "time_ms")) it.time_s = *v / 1000;
    if (auto v = group(m, "elapsed_s"); v && *step > last_step_ && *v > last_elapsed_) {
      if (!known(it.time_s)) {
        it.time_s = (*v - last_elapsed_) / (*step - last_step_);
        it.count = static_cast<std::uint32_t>(std::min(*step - last_step_, 1e9));
      }
      last_elapsed_ = *v;
    }
    last_step_ = *step;
    if (auto v = group(m, "tokens")) it.tokens = *v;
    if (auto v = group(m, "samples")) it.samples = *v;
    if (auto v = group(m, "tokens_per_s"); v && known(it.time_s)) it.tokens = *v * it.time_s;
    if (auto v = group(m, "samples_per_s"); v && known(it.time_s)) it.samples = *v * it.time_s;
    if (auto v = group(m, "tflops_per_gpu")) it.reported_flops_per_gpu = *v * 1e12;
    if (auto v = group(m, "mfu")) it.reported_mfu = *v / 100;
    if (auto v = group(m, "loss")) it.loss = *v;
    if (known(it.time_s)) out_.field("time");
    if (known(it.tokens)) out_.field("tokens");
    if (known(it.loss)) out_.field("loss");
    out_.add(it);
  }

 private:
  std::optional<double> group(const std::match_results<std::string_view::const_iterator>& m,
                              const char* name) const {
    const auto g = p_.group.find(name);
    if (g == p_.group.end() || g->second >= m.size() || !m[g->second].matched ||
        m[g->second].length() == 0)
      return std::nullopt;
    std::string_view s(m[g->second].first, m[g->second].second);
    return take_number(s, true);
  }

  RunBuilder& out_;
  CompiledPattern p_;
  double last_step_ = 0, last_elapsed_ = 0;
};

double sniff_pattern(std::string_view, std::string_view) {
  return 0;  // only when asked for (--pattern)
}

}  // namespace

const FormatSpec& pattern_format() {
  static const FormatSpec spec{"pattern",
                               "the user's regular expression with named groups",
                               sniff_pattern,
                               make_line_parser<PatternParser>,
                               nullptr,
                               nullptr,
                               0,
                               TimingKind::kSampled};
  return spec;
}

}  // namespace mfu::detail
