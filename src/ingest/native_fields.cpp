#include "ingest/native_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "text.hpp"

namespace mfu::detail {

double unit_suffix(std::string_view key, std::string_view& base) {
  struct Suffix {
    std::string_view s;
    double m;
  };
  static constexpr Suffix kSuffixes[] = {{"_ms", 1e-3}, {"_us", 1e-6},  {"_ns", 1e-9}, {"_s", 1.0},
                                         {"_sec", 1.0}, {"_min", 60.0}, {"_h", 3600.0}};
  for (const auto& sfx : kSuffixes) {
    if (ends_with(key, sfx.s)) {
      base = key.substr(0, key.size() - sfx.s.size());
      return sfx.m;
    }
  }
  base = key;
  return 0.0;
}

namespace {

bool phase_from_name(std::string_view base, Phase& p) {
  if (base == "forward" || base == "fwd")
    p = Phase::kForward;
  else if (base == "backward" || base == "bwd")
    p = Phase::kBackward;
  else if (base == "forward_backward" || base == "fwd_bwd")
    p = Phase::kForwardBackward;
  else if (base == "optimizer" || base == "optim" || base == "opt")
    p = Phase::kOptimizer;
  else if (base == "comm" || base == "communication" || base == "exposed_comm")
    p = Phase::kComm;
  else if (base == "data" || base == "dataloader" || base == "io" || base == "data_wait")
    p = Phase::kData;
  else if (base == "generate" || base == "generation")
    p = Phase::kGenerate;
  else if (base == "other")
    p = Phase::kOther;
  else if (base == "compute")
    p = Phase::kCompute;
  else if (base == "idle")
    p = Phase::kIdle;
  else
    return false;
  return true;
}

bool is_meta_number_key(std::string_view k) {
  static constexpr std::string_view kKeys[] = {"gpus",
                                               "world_size",
                                               "seq_len",
                                               "layers",
                                               "hidden",
                                               "heads",
                                               "kv_heads",
                                               "head_dim",
                                               "ffn",
                                               "vocab",
                                               "experts",
                                               "top_k",
                                               "params",
                                               "tp",
                                               "pp",
                                               "dp",
                                               "cp",
                                               "ep",
                                               "micro_batch",
                                               "global_batch",
                                               "grad_accum",
                                               "num_micro_batches",
                                               "virtual_pp",
                                               "moe_ffn",
                                               "shared_experts",
                                               "peak_flops",
                                               "log_interval",
                                               "swiglu"};
  for (auto key : kKeys)
    if (k == key) return true;
  return false;
}

}  // namespace

NativeKey resolve_number_key(std::string_view key) {
  using T = NativeKey::Target;
  if (key == "step" || key == "iteration" || key == "iter") return {T::kStep};
  if (key == "count" || key == "iterations") return {T::kCount};
  if (key == "rank") return {T::kRank};
  if (key == "timestamp" || key == "timestamp_s" || key == "wall_time" || key == "unix_time")
    return {T::kTimestamp};
  if (key == "timestamp_ms") return {T::kTimestampMs};
  if (key == "tokens") return {T::kTokens};
  if (key == "samples") return {T::kSamples};
  if (key == "loss") return {T::kLoss};
  if (key == "model_flops" || key == "flops") return {T::kModelFlops};
  if (key == "mfu") return {T::kMfu};
  if (key == "tflops" || key == "tflops_per_gpu") return {T::kFlopsPerGpu, 1e12};
  if (key == "achieved_flops_per_s_per_gpu") return {T::kFlopsPerGpu, 1.0};
  std::string_view base;
  const double m = unit_suffix(key, base);
  if (m > 0) {
    if (base == "time" || base == "step_time" || base == "iteration_time" || base == "elapsed")
      return {T::kTime, m};
    if (base == "duration") return {T::kDuration, m};
    Phase p;
    if (phase_from_name(base, p)) return {T::kPhase, m, p};
  }
  // Every other number is metadata on a meta line (kept), and ignored on a step line.
  return {T::kOther};
}

NativeKey resolve_phase_key(std::string_view key) {
  std::string_view base;
  double m = unit_suffix(key, base);
  if (m == 0) m = 1.0;
  Phase p;
  if (phase_from_name(base, p)) return {NativeKey::Target::kPhase, m, p};
  return {NativeKey::Target::kOther};
}

void NativeRecord::number(const NativeKey& k, std::string_view key, double value) {
  using T = NativeKey::Target;
  switch (k.target) {
    case T::kStep: {
      const std::int64_t step = as_step(value);
      if (step < 0) {
        if (bad_.empty()) bad_ = fmt::format("step must be a whole number >= 0, got {}", value);
        return;
      }
      it_.step = step;
      has_step_ = true;
      return;
    }
    case T::kCount:
      if (std::isfinite(value) && value >= 1 && value < 4e9)
        it_.count = static_cast<std::uint32_t>(value);
      return;
    case T::kRank:
      if (std::isfinite(value) && value >= 0 && value < 1e9)
        it_.rank = static_cast<std::int32_t>(value);
      return;
    case T::kTimestamp: it_.timestamp_s = value; return;
    case T::kTimestampMs: it_.timestamp_s = value / 1000.0; return;
    case T::kTokens: it_.tokens = value; return;
    case T::kSamples: it_.samples = value; return;
    case T::kLoss:
      it_.loss = value;
      loss_unread_ = false;  // the last "loss" of the line stands
      return;
    case T::kModelFlops: it_.model_flops = value; return;
    case T::kMfu: it_.reported_mfu = value; return;
    case T::kFlopsPerGpu: it_.reported_flops_per_gpu = value * k.scale; return;
    case T::kTime:
      if (!std::isfinite(value)) {
        if (bad_.empty()) bad_ = fmt::format("{} is not a finite number", key);
        return;
      }
      it_.time_s = value * k.scale;
      return;
    case T::kDuration: ev_.duration_s = value * k.scale; return;
    case T::kPhase: it_.at(k.phase) = value * k.scale; return;
    case T::kOther: meta_numbers_.push_back({key, value, {}}); return;
  }
}

void NativeRecord::reset() {
  kind_ = Kind::kIteration;
  has_step_ = false;
  it_ = Iteration{};
  // An event's step, rank and time are read into it_; only these two go to ev_ (assigning a
  // whole Event, and copying those three into it, on every line was 4% of BM_NativeLines).
  ev_.duration_s = kUnknown;
  ev_.detail.clear();
  event_kind_.clear();
  meta_numbers_.clear();
  meta_texts_.clear();
  bad_.clear();
  loss_unread_ = false;
}

void NativeRecord::text(std::string_view key, std::string value) {
  if (key == "type") {
    if (value == "meta")
      kind_ = Kind::kMeta;
    else if (value == "event")
      kind_ = Kind::kEvent;
    else
      kind_ = Kind::kIteration;
    return;
  }
  if (key == "kind") {
    event_kind_ = std::move(value);
    return;
  }
  if (key == "detail" || key == "name") {
    ev_.detail = std::move(value);
    return;
  }
  if (key == "gpu")
    meta_texts_.emplace_back("gpu_name", std::move(value));
  else if (key == "model")
    meta_texts_.emplace_back("model_name", std::move(value));
  else
    meta_texts_.emplace_back(std::string(key), std::move(value));
}

void NativeRecord::phase(const NativeKey& k, double value) {
  if (k.target == NativeKey::Target::kPhase) it_.at(k.phase) = value * k.scale;
}

void NativeRecord::emit(RunBuilder& out, std::uint64_t line) {
  const bool meta_like = !has_step_ && kind_ == Kind::kIteration && !known(it_.time_s) &&
                         (!meta_texts_.empty() ||
                          std::any_of(meta_numbers_.begin(), meta_numbers_.end(),
                                      [](const auto& n) { return is_meta_number_key(n.key); }));
  if (kind_ == Kind::kMeta || meta_like) {
    // The first meta line's values stand (the same rule in the streaming and the parallel
    // reader); a later, different value is a warning naming both lines.
    for (const OtherNumber& n : meta_numbers_) {
      const double v = n.text.empty() ? n.value : parse_double(n.text).value_or(kUnknown);
      if (std::isfinite(v))
        out.meta_first(n.key == "world_size" ? "gpus" : std::string(n.key), v, line);
    }
    for (const auto& [k, v] : meta_texts_)
      if (!v.empty()) out.meta_first(k, v, line);
    // A meta line's time is a time the log covers (printed at the start or the end of the job).
    if (known(it_.timestamp_s)) out.timestamp(it_.timestamp_s);
    return;
  }
  if (kind_ == Kind::kEvent) {
    Event e = ev_;
    e.step = it_.step;
    e.rank = it_.rank;
    e.timestamp_s = it_.timestamp_s;
    e.line = static_cast<std::uint32_t>(line);
    const std::string& k = event_kind_;
    if (k == "checkpoint" || k == "checkpoint_save" || k == "save" || k == "ckpt")
      e.kind = EventKind::kCheckpointSave;
    else if (k == "checkpoint_load" || k == "load" || k == "restore")
      e.kind = EventKind::kCheckpointLoad;
    else if (k == "eval" || k == "evaluation" || k == "validation")
      e.kind = EventKind::kEval;
    else if (k == "restart" || k == "failure")
      e.kind = EventKind::kRestart;
    else if (k == "startup" || k == "init")
      e.kind = EventKind::kStartup;
    else if (k == "stall")
      e.kind = EventKind::kStall;
    else
      e.kind = EventKind::kOther;
    if (e.detail.empty()) e.detail = k;
    if (known(e.duration_s) && (!std::isfinite(e.duration_s) || e.duration_s < 0)) {
      out.malformed(line, fmt::format("event duration must be a time >= 0, got {}", e.duration_s));
      return;
    }
    out.add_event(std::move(e));
    return;
  }
  if (!has_step_) {
    out.malformed(line, bad_.empty()
                            ? "a native line needs \"step\" (or \"type\":\"meta\"/\"event\")"
                            : bad_);
    return;
  }
  if (!bad_.empty()) {
    out.malformed(line, bad_);
    return;
  }
  if (known(it_.time_s) && (!std::isfinite(it_.time_s) || it_.time_s <= 0)) {
    out.malformed(
        line,
        fmt::format("step {}: time must be a positive number of seconds, got {}; record skipped",
                    it_.step, it_.time_s));
    return;
  }
  it_.line = static_cast<std::uint32_t>(line);
  if (it_.rank >= 0) out.saw_rank(it_.rank);
  if (loss_unread_) out.loss_left_out();
  out.add(it_);
}

}  // namespace mfu::detail
