#include "mfu/error.hpp"

#include <utility>

namespace mfu {

std::string Location::to_string() const {
  if (file.empty() && line == 0) return {};
  if (file.empty()) return "line " + std::to_string(line);
  if (line == 0) return file;
  return file + ":" + std::to_string(line);
}

Error::Error(std::string message, std::string hint, Location where)
    : std::runtime_error(std::move(message)), hint_(std::move(hint)), where_(std::move(where)) {}

std::string Error::located_message() const {
  const std::string loc = where_.to_string();
  return loc.empty() ? std::string(what()) : loc + ": " + what();
}

}  // namespace mfu
