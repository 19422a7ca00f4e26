#include "mfu/run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "mfu/error.hpp"
#include "text.hpp"

namespace mfu {

const char* to_string(Phase p) {
  switch (p) {
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kForwardBackward: return "forward_backward";
    case Phase::kOptimizer: return "optimizer";
    case Phase::kComm: return "comm";
    case Phase::kData: return "data";
    case Phase::kGenerate: return "generate";
    case Phase::kOther: return "other";
    case Phase::kCompute: return "compute";
    case Phase::kIdle: return "idle";
  }
  return "?";
}

const char* phase_key(Phase p) {
  switch (p) {
    case Phase::kForward: return "forward_s";
    case Phase::kBackward: return "backward_s";
    case Phase::kForwardBackward: return "forward_backward_s";
    case Phase::kOptimizer: return "optimizer_s";
    case Phase::kComm: return "comm_s";
    case Phase::kData: return "data_s";
    case Phase::kGenerate: return "generate_s";
    case Phase::kOther: return "other_s";
    case Phase::kCompute: return "compute_s";
    case Phase::kIdle: return "idle_s";
  }
  return "?";
}

const char* to_string(EventKind k) {
  switch (k) {
    case EventKind::kCheckpointSave: return "checkpoint_save";
    case EventKind::kCheckpointLoad: return "checkpoint_load";
    case EventKind::kEval: return "eval";
    case EventKind::kRestart: return "restart";
    case EventKind::kStartup: return "startup";
    case EventKind::kStall: return "stall";
    case EventKind::kOther: return "other";
  }
  return "?";
}

// ---- RunMeta --------------------------------------------------------------------------------

void RunMeta::set(const std::string& key, double value, const std::string& source, bool overwrite) {
  if (!overwrite && values_.count(key)) return;
  values_[key] = MetaValue{value, source, overwrite};
}

void RunMeta::set(const std::string& key, const std::string& value, const std::string& source,
                  bool overwrite) {
  if (!overwrite && values_.count(key)) return;
  // Text from a log is kept printable: no report or warning can carry its control characters.
  values_[key] =
      MetaValue{detail::needs_printable(value) ? detail::printable(value) : value,
                detail::needs_printable(source) ? detail::printable(source) : source, overwrite};
}

std::vector<RunMeta::Conflict> RunMeta::conflicts_with(const RunMeta& other) const {
  std::vector<Conflict> out;
  for (const auto& [key, mine] : values_) {
    const auto it = other.values_.find(key);
    if (it != other.values_.end() && it->second.value != mine.value)
      out.push_back(Conflict{key, mine, it->second});
  }
  return out;
}

std::optional<double> RunMeta::number(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  if (const double* d = std::get_if<double>(&it->second.value)) return *d;
  return std::nullopt;
}

std::optional<std::string> RunMeta::text(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  if (const std::string* s = std::get_if<std::string>(&it->second.value)) return *s;
  return std::nullopt;
}

std::string RunMeta::source(const std::string& key) const {
  auto it = values_.find(key);
  return it == values_.end() ? std::string() : it->second.source;
}

void RunMeta::fill_from(const RunMeta& other) {
  for (const auto& [k, v] : other.values_)
    if (!values_.count(k)) values_[k] = v;
}

}  // namespace mfu
