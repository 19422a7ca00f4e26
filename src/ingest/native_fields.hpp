#pragma once
// The field names of mfu's native format, shared by the JSON Lines and CSV readers and by
// write_native(). Units are in the key suffix: _s, _ms, _us (seconds are the default).

#include <string>
#include <string_view>

#include "ingest/parser.hpp"

namespace mfu::detail {

/// What a numeric key of a native line sets, with its unit: resolved once per key name, so
/// that a reader can remember it for the next line's same key.
struct NativeKey {
  enum class Target : std::uint8_t {
    kStep,
    kCount,
    kRank,
    kTimestamp,
    kTimestampMs,
    kTokens,
    kSamples,
    kLoss,
    kModelFlops,
    kMfu,
    kFlopsPerGpu,
    kTime,
    kDuration,
    kPhase,
    kOther,  ///< metadata on a meta line, ignored on a step line (inside "phases": ignored)
  };
  Target target = Target::kOther;
  double scale = 1.0;  ///< the unit's multiplier (seconds, FLOP/s)
  Phase phase = Phase::kOther;
};

/// A top-level numeric key ("step", "time_ms", "comm_s", "lr", ...).
[[nodiscard]] NativeKey resolve_number_key(std::string_view key);
/// A key inside "phases"/"timers" ("forward_s", "comm_ms"; a bare name is seconds).
[[nodiscard]] NativeKey resolve_phase_key(std::string_view key);

/// One native line (meta, iteration or event) as it is read, key by key. The keys passed to
/// number() must stay valid until emit(): numbers under keys that are no field are kept as
/// views (on a step line they are ignored, and copying "lr" and "grad_norm" into strings was
/// most of the native reader's memcpy).
class NativeRecord {
 public:
  void number(std::string_view key, double value) { number(resolve_number_key(key), key, value); }
  /// `k` is resolve_number_key(key).
  void number(const NativeKey& k, std::string_view key, double value);
  /// A number under a key that is no field (`k.target` is kOther), as its text: it counts only
  /// on a meta line, so it is read at emit() and only there. `text` is a number that
  /// fast_from_chars reads whole, and stays valid until emit(), like the key.
  void other_number_text(std::string_view key, std::string_view text) {
    meta_numbers_.push_back({key, 0.0, text});
  }
  /// A plain number under "loss" on a reader that keeps no loss (IngestOptions::keep_loss):
  /// not read, since the builder would drop it; a step record from this line says the run
  /// had a loss all the same.
  void loss_unread() {
    loss_unread_ = true;
    it_.loss = kUnknown;  // the last "loss" of the line stands
  }
  void text(std::string_view key, std::string value);
  /// A key inside "phases": forward_s, comm_ms, ...
  void phase(std::string_view key, double value) { phase(resolve_phase_key(key), value); }
  /// `k` is resolve_phase_key(key).
  void phase(const NativeKey& k, double value);
  /// Sends the record to the builder.
  void emit(RunBuilder& out, std::uint64_t line);
  /// Empties the record for the next line (keeping its buffers).
  void reset();

 private:
  enum class Kind { kIteration, kMeta, kEvent };
  Kind kind_ = Kind::kIteration;
  bool has_step_ = false;
  Iteration it_;
  Event ev_;
  std::string event_kind_;
  /// Numbers under keys that are no field, in the line's order (the first of a key stands).
  struct OtherNumber {
    std::string_view key;
    double value = 0;
    std::string_view text;  ///< when not empty, the value is still this text
  };
  std::vector<OtherNumber> meta_numbers_;
  std::vector<std::pair<std::string, std::string>> meta_texts_;
  std::string bad_;  // first invalid value, for the diagnostic
  bool loss_unread_ = false;
};

/// Splits "comm_ms" into ("comm", 1e-3); returns the multiplier or 0 when there is no unit.
double unit_suffix(std::string_view key, std::string_view& base);

}  // namespace mfu::detail
