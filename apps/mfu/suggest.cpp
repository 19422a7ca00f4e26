// "mfu help" and "did you mean" for mistyped subcommands and flags (suggest.hpp).
#include "suggest.hpp"

#include <algorithm>

namespace mfu::cli {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* opt : app.get_options())
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  return names;
}

/// "'mfu calc'", "'mfu calc' or 'mfu check'", "a, b or c".
std::string one_of(const std::vector<std::string>& names, const char* open, const char* close) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += i + 1 == names.size() ? " or " : ", ";
    s += open + names[i] + close;
  }
  return s;
}

}  // namespace

std::vector<std::string> closest(std::string_view word,
                                 const std::vector<std::string>& candidates) {
  std::vector<std::string> best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best.clear();
    }
    if (d == best_d && std::find(best.begin(), best.end(), c) == best.end()) best.push_back(c);
  }
  return best;
}

std::string unknown_command(const CLI::App& app, const std::vector<std::string>& args) {
  const auto subs = subcommand_names(app);
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty() || a[0] == '-') {
      // The value of a global option that takes one ("--color never") is not a command.
      if (a == "--gpu-db" || a == "--color") ++i;
      continue;
    }
    return std::find(subs.begin(), subs.end(), a) == subs.end() ? a : std::string();
  }
  return {};
}

std::vector<std::string> expand_help(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (args.size() >= 2 && args[1] == "help") {
    args.erase(args.begin() + 1);
    args.emplace_back("--help");
  }
  return args;
}

std::string did_you_mean(const CLI::App& app, const std::vector<std::string>& args) {
  const auto subs = subcommand_names(app);
  const CLI::App* sub = nullptr;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty() || a[0] == '-') continue;
    if (std::find(subs.begin(), subs.end(), a) != subs.end()) {
      sub = app.get_subcommand(a);
      break;
    }
    // The first word is the subcommand: a near miss is a typo ("mfu analyse").
    if (const auto near = closest(a, subs); !near.empty())
      return "did you mean " + one_of(near, "'mfu ", "'") + "?";
    break;
  }
  if (sub == nullptr) return {};
  auto known = flag_names(*sub);
  for (const auto& g : flag_names(app)) known.push_back(g);
  for (const auto& a : args) {
    if (a.rfind("--", 0) != 0) continue;
    const std::string flag = a.substr(0, a.find('='));
    if (std::find(known.begin(), known.end(), flag) != known.end()) continue;
    if (const auto near = closest(flag, known); !near.empty())
      return "did you mean " + one_of(near, "", "") + "?";
  }
  return {};
}

}  // namespace mfu::cli
