#pragma once
/// Errors a user can cause (bad flags, unreadable or malformed input, impossible numbers).
/// The CLI prints them as `mfu: error: FILE:LINE: message` plus `hint: ...` and exits 2.

#include <cstdint>
#include <stdexcept>
#include <string>

namespace mfu {

/// Where in the input an error was found. `line` is 1-based; 0 means "no line".
struct Location {
  std::string file;
  std::uint64_t line = 0;

  [[nodiscard]] bool empty() const { return file.empty() && line == 0; }
  /// "file:line", "file" or "line N".
  [[nodiscard]] std::string to_string() const;
};

/// A problem the user can fix. `what()` is the message without location or hint.
class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, std::string hint = {}, Location where = {});

  [[nodiscard]] const std::string& hint() const { return hint_; }
  [[nodiscard]] const Location& where() const { return where_; }
  /// The full one-line message: "file:line: message".
  [[nodiscard]] std::string located_message() const;

 private:
  std::string hint_;
  Location where_;
};

/// A number that cannot be true (MFU above 100%, negative lost time, buckets that do not add up).
/// Raised by the library instead of printing a confident wrong result.
class ImpossibleResult : public Error {
 public:
  using Error::Error;
};

/// A broken invariant inside mfu (the waterfall does not add up to the independently measured
/// wall time, a negative part): a bug in mfu, never the user's mistake. The CLI reports it as
/// such, with its own exit code.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message)
      : std::logic_error("internal error: " + message) {}
};

}  // namespace mfu
