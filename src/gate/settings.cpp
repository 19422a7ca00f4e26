// Settings files for `mfu check` (and the other subcommands): mfu.toml or .mfu.json.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mfu/error.hpp"
#include "mfu/gate.hpp"
#include "text.hpp"

namespace mfu {
namespace {

std::string unquote(std::string_view v, const std::string& file, std::size_t line) {
  v = detail::trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) {
    if (v.back() != v.front())
      throw Error("unterminated string", "close the quotes", Location{file, line});
    return std::string(v.substr(1, v.size() - 2));
  }
  return std::string(v);
}

}  // namespace

std::map<std::string, std::vector<std::string>> load_settings(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open settings file '{}'", path));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::map<std::string, std::vector<std::string>> out;
  if (detail::ends_with(path, ".json")) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw Error(fmt::format("'{}' is not a JSON object of settings", path),
                  "e.g. {\"min-mfu\": \"40%\", \"gpu\": \"h100\"}");
    for (auto& item : j.items()) {
      const std::string k = item.key();
      const nlohmann::json& v = item.value();
      auto& dst = out[k];
      auto add = [&](const nlohmann::json& x) {
        if (x.is_string())
          dst.push_back(x.get<std::string>());
        else if (x.is_number() || x.is_boolean())
          dst.push_back(x.dump());
        else
          throw Error(fmt::format("'{}': setting '{}' must be a string, a number or a list of them",
                                  path, k));
      };
      if (v.is_array()) {
        for (const auto& x : v) add(x);
      } else {
        add(v);
      }
    }
    return out;
  }
  std::size_t n = 0;
  for (auto raw : detail::split(text, '\n')) {
    ++n;
    std::string_view line = detail::trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == '[') continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos)
      throw Error("expected 'key = value'", "see README.md for the settings file",
                  Location{path, n});
    const std::string key = unquote(line.substr(0, eq), path, n);
    std::string_view value = detail::trim(line.substr(eq + 1));
    // A trailing comment after the value.
    if (const std::size_t hash = value.find(" #"); hash != std::string_view::npos)
      value = detail::trim(value.substr(0, hash));
    auto& dst = out[key];
    if (!value.empty() && value.front() == '[') {
      if (value.back() != ']')
        throw Error("a list must be on one line and end with ']'", "", Location{path, n});
      for (auto item : detail::split(value.substr(1, value.size() - 2), ',')) {
        if (!detail::trim(item).empty()) dst.push_back(unquote(item, path, n));
      }
    } else {
      dst.push_back(unquote(value, path, n));
    }
  }
  return out;
}

}  // namespace mfu
