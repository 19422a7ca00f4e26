#include "ingest/text_scan.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "text.hpp"

namespace mfu::detail {
void resolve_yearless_timestamps(Run& run, double first_yearless, double last_yearless) {
  if (!known(first_yearless)) return;
  if (!known(run.first_timestamp_s)) {
    run.first_timestamp_s = first_yearless;
    run.last_timestamp_s = last_yearless;
    return;
  }
  // The year of the first dated line: days since 1970 -> civil year (Hinnant's civil_from_days).
  const long long z0 = static_cast<long long>(std::floor(run.first_timestamp_s / 86400.0)) + 719468;
  const long long era = (z0 >= 0 ? z0 : z0 - 146096) / 146097;
  const long long doe = z0 - era * 146097;
  const long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  long long y = yoe + era * 400;
  const long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const long long mp = (5 * doy + 2) / 153;
  const long long m = mp + (mp < 10 ? 3 : -9);
  if (m <= 2) ++y;
  const double offset = unix_seconds(static_cast<int>(y), 1, 1, 0, 0, 0);
  for (std::size_t i = 0; i < run.iterations.size(); ++i) {
    Iteration it = run.iterations[i];
    if (known(it.timestamp_s) && it.timestamp_s < kYearlessLimit) {
      it.timestamp_s += offset;
      run.iterations.set(i, it);
    }
  }
  for (auto& e : run.events)
    if (known(e.timestamp_s) && e.timestamp_s < kYearlessLimit) e.timestamp_s += offset;
  run.first_timestamp_s = std::min(run.first_timestamp_s, first_yearless + offset);
  run.last_timestamp_s = std::max(run.last_timestamp_s, last_yearless + offset);
}

std::int32_t find_rank(std::string_view line) {
  // The keys in the order they are tried; a key counts at its first place in the first 200
  // bytes only. All three hold "ank" once (at `ank`): one scan for it finds where each key
  // first stands (three searches of the head were 10% of a Megatron line's parse).
  struct Key {
    std::string_view text;
    std::size_t ank;
  };
  static constexpr std::array<Key, 3> kKeys{{{"[rank", 2}, {"[Rank ", 2}, {"rank=", 1}}};
  const std::string_view head = line.substr(0, std::min<std::size_t>(line.size(), 200));
  std::array<std::size_t, 3> first{head.npos, head.npos, head.npos};
  for (std::size_t a = find_text(head, "ank"); a != head.npos; a = find_text(head, "ank", a + 1))
    for (std::size_t k = 0; k < kKeys.size(); ++k)
      if (first[k] == head.npos && a >= kKeys[k].ank &&
          head.substr(a - kKeys[k].ank, kKeys[k].text.size()) == kKeys[k].text)
        first[k] = a - kKeys[k].ank;
  for (std::size_t k = 0; k < kKeys.size(); ++k) {
    if (first[k] == head.npos) continue;
    std::size_t i = first[k] + kKeys[k].text.size();
    while (i < head.size() && head[i] == ' ') ++i;
    std::int32_t r = 0;
    bool any = false;
    while (i < head.size() && head[i] >= '0' && head[i] <= '9' && r < 10000000) {
      r = r * 10 + (head[i] - '0');
      any = true;
      ++i;
    }
    if (any) return r;
  }
  return -1;
}

void TimerSet::add(std::string_view name, double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return;
  std::string key = to_lower(trim(name));
  for (char& c : key)
    if (c == '_' || c == ' ') c = '-';
  timers_[key] = seconds;
}

std::optional<double> TimerSet::get(std::initializer_list<const char*> names) const {
  for (const char* n : names) {
    auto it = timers_.find(n);
    if (it != timers_.end()) return it->second;
  }
  return std::nullopt;
}

void TimerSet::apply(Iteration& it) const {
  auto sum = [&](std::initializer_list<const char*> names) -> std::optional<double> {
    double total = 0;
    bool any = false;
    for (const char* n : names) {
      auto v = get({n});
      if (v) {
        total += *v;
        any = true;
      }
    }
    return any ? std::optional<double>(total) : std::nullopt;
  };
  const auto fb = get({"forward-backward"});
  const auto data = get({"batch-generator", "batch-input", "data-loading"});
  auto fwd = get({"forward-compute", "forward", "forward-microstep", "fwd-microstep", "fwd"});
  const auto bwd_inner =
      get({"backward-compute", "backward-backward", "backward-inner-microstep", "backward-inner"});
  const auto bwd_total = get({"backward", "backward-microstep", "bwd-microstep", "bwd"});
  const auto ar =
      get({"backward-allreduce", "backward-allreduce-microstep", "bwd-allreduce-microstep"});
  std::optional<double> grad_sync = get({"backward-reduce-model-grads"});
  if (!grad_sync)
    grad_sync = sum({"all-grads-sync", "params-all-gather", "layernorm-grads-all-reduce",
                     "embedding-grads-all-reduce", "backward-params-all-reduce",
                     "backward-layernorm-all-reduce", "backward-embedding-all-reduce"});
  const auto p2p =
      sum({"forward-send", "forward-recv", "backward-send", "backward-recv",
           "forward-send-forward-recv", "forward-send-backward-recv", "backward-send-forward-recv",
           "backward-send-backward-recv", "forward-backward-send-forward-backward-recv"});
  const auto opt = get({"optimizer", "step", "step-microstep", "optimizer-step"});

  if (fb) it.at(Phase::kForwardBackward) = *fb;
  if (data) it.at(Phase::kData) = *data;
  if (fwd) {
    // Megatron times get_batch (batch-generator) inside forward-compute.
    double f = *fwd;
    if (data && *data <= f) f -= *data;
    it.at(Phase::kForward) = f;
  }
  if (bwd_inner) {
    it.at(Phase::kBackward) = *bwd_inner;
  } else if (bwd_total) {
    it.at(Phase::kBackward) = (ar && *ar <= *bwd_total) ? *bwd_total - *ar : *bwd_total;
  }
  double comm = 0;
  bool any_comm = false;
  for (const auto& c : {ar, grad_sync, p2p}) {
    if (c) {
      comm += *c;
      any_comm = true;
    }
  }
  if (any_comm) it.at(Phase::kComm) = comm;
  if (opt) it.at(Phase::kOptimizer) = *opt;
}

}  // namespace mfu::detail
