#pragma once
// The field names of mfu's native format, shared by the JSON Lines and CSV readers and by
// write_native(). Units are in the key suffix: _s, _ms, _us (seconds are the default).

#include <string>
#include <string_view>

#include "ingest/parser.hpp"

namespace mfu::detail {

/// One native line (meta, iteration or event) as it is read, key by key.
class NativeRecord {
 public:
  void number(std::string_view key, double value);
  void text(std::string_view key, std::string value);
  /// A key inside "phases": forward_s, comm_ms, ...
  void phase(std::string_view key, double value);
  /// Sends the record to the builder.
  void emit(RunBuilder& out, std::uint64_t line);

 private:
  enum class Kind { kIteration, kMeta, kEvent };
  Kind kind_ = Kind::kIteration;
  bool has_step_ = false;
  Iteration it_;
  Event ev_;
  std::string event_kind_;
  std::vector<std::pair<std::string, double>> meta_numbers_;
  std::vector<std::pair<std::string, std::string>> meta_texts_;
  std::string bad_;  // first invalid value, for the diagnostic
};

/// Splits "comm_ms" into ("comm", 1e-3); returns the multiplier or 0 when there is no unit.
double unit_suffix(std::string_view key, std::string_view& base);

}  // namespace mfu::detail
