// torchtitan console logs (pytorch/torchtitan components/metrics.py), with ANSI colours:
//   [rank0]:[titan] 2026-04-18 22:15:44,378 - root - INFO - step: 10  loss: 11.78140
//   grad_norm:  9.8978  memory: 29.11GiB(92.83%)  tps: 70,593  tflops: 47.97  mfu: 15.38%
// tps is tokens per second per device averaged since the previous line; with the global batch
// and sequence length (printed at start) it gives the step time.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ingest/common_meta.hpp"
#include "ingest/parser.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// Removes "[rank0]:" prefixes (torchrun's --tee / --log-dir prefixing).
std::string_view strip_rank_prefix(std::string_view s) {
  while (starts_with(s, "[rank")) {
    const std::size_t c = s.find("]:");
    if (c == std::string_view::npos || c > 16) break;
    s.remove_prefix(c + 2);
  }
  return s;
}

class TorchtitanParser : public LineParser {
 public:
  explicit TorchtitanParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    const std::int32_t rank =
        starts_with(raw, "[rank") ? find_rank(raw.substr(0, 16)) : out_.line_attrs().rank;
    std::string_view text = strip_rank_prefix(raw);
    // A new log record ends a config dump that never closed (a cut-off log).
    if (config_depth_ > 0 && (starts_with(text, "[titan]") || contains(text, " - root - ")))
      finish_config(number);
    if (config_depth_ > 0) {
      config_ += text;
      config_ += '\n';
      for (char c : text) {
        if (c == '{') ++config_depth_;
        if (c == '}') --config_depth_;
      }
      if (config_depth_ <= 0 || config_.size() > (4u << 20)) finish_config(number);
      return;
    }
    const double ts = out_.line_timestamp(text);
    if (known(ts)) out_.timestamp(ts);
    const std::size_t sp = text.find("step:");
    if (sp != std::string_view::npos && contains(text, "loss:") &&
        (contains(text, "tps:") || contains(text, "tflops:") || contains(text, "mfu:"))) {
      step_line(text.substr(sp), number, ts, rank);
      return;
    }
    meta_line(text, number);
  }

  void finish() override {
    if (config_depth_ > 0) finish_config(0);
    scanner_.finish(out_);
  }

 private:
  void step_line(std::string_view t, std::uint64_t number, double ts, std::int32_t rank) {
    std::string_view s = t.substr(5);
    auto step = take_number(s);
    if (!step || *step < 0) {
      out_.malformed(number, "cannot read the step number after 'step:'");
      return;
    }
    Iteration it;
    it.step = as_step(*step);
    it.line = static_cast<std::uint32_t>(number);
    it.timestamp_s = ts;
    it.rank = rank;
    out_.saw_rank(rank);
    if (auto v = number_after(t, "loss:")) it.loss = *v;
    double tps = kUnknown;
    if (auto v = number_after(t, "tps:", true)) tps = *v;
    if (auto v = number_after(t, "tflops:", true)) {
      it.reported_flops_per_gpu = *v * 1e12;
      out_.meta("framework_flops_by", "torchtitan", number, false);
    }
    if (auto v = number_after(t, "mfu:", true)) it.reported_mfu = *v / 100.0;
    // Step time from tps: tps = global tokens / (time * world size) (metrics.py divides the
    // per-replica token count by the non-data-parallel degree).
    const auto gb = out_.run.meta.number("global_batch");
    const auto seq = out_.run.meta.number("seq_len");
    const auto world = out_.run.meta.number("gpus");
    if (gb && seq) it.tokens = *gb * *seq;
    if (known(tps) && tps > 0 && gb && seq && world) it.time_s = *gb * *seq / (tps * *world);
    if (known(tps) && tps <= 0) {
      out_.malformed(number, fmt::format("step {}: tps is {}, not a positive rate", it.step, tps));
      return;
    }
    out_.add(it);
  }

  void meta_line(std::string_view t, std::uint64_t number) {
    if (const std::size_t p = t.find("Building device mesh with parallelism:");
        p != std::string_view::npos) {
      // "pp=1, dp_replicate=1, dp_shard=1, cp=1, tp=1, ep=1, etp=1"
      double world = 1;
      bool complete = true;
      double dp = 1;
      for (const char* k : {"pp=", "dp_replicate=", "dp_shard=", "cp=", "tp="}) {
        auto v = number_after(t.substr(p), k);
        if (!v || *v < 1) {
          complete = false;
          continue;
        }
        world *= *v;
        if (std::string_view(k) == "dp_replicate=" || std::string_view(k) == "dp_shard=") dp *= *v;
      }
      if (auto v = number_after(t.substr(p), "pp=")) out_.meta("pp", *v, number);
      if (auto v = number_after(t.substr(p), "tp=")) out_.meta("tp", *v, number);
      if (auto v = number_after(t.substr(p), "cp=")) out_.meta("cp", *v, number);
      if (auto v = number_after(t.substr(p), "ep=")) out_.meta("ep", *v, number);
      if (complete) {
        out_.meta("gpus", world, number);
        out_.meta("dp", dp, number);
      }
      return;
    }
    if (contains(t, "Trainer is initialized with")) {
      if (auto v = number_after(t, "local batch size")) out_.meta("micro_batch", *v, number);
      if (auto v = number_after(t, "global batch size")) out_.meta("global_batch", *v, number);
      if (auto v = number_after(t, "gradient accumulation steps"))
        out_.meta("grad_accum", *v, number);
      if (auto v = number_after(t, "sequence length")) out_.meta("seq_len", *v, number);
      if (auto v = number_after(t, "total steps")) out_.meta("train_iters", *v, number);
      return;
    }
    if (contains(t, "Training with local batch size") ||
        (contains(t, "local batch size") && contains(t, "sequence length"))) {
      if (auto v = number_after(t, "global batch size"))
        out_.meta("global_batch", *v, number, false);
      if (auto v = number_after(t, "sequence length")) out_.meta("seq_len", *v, number, false);
      return;
    }
    if (const std::size_t p = t.find("Peak FLOPS used for computing MFU:");
        p != std::string_view::npos) {
      if (auto v = number_after(t.substr(p), "MFU:")) out_.meta("framework_peak_flops", *v, number);
      return;
    }
    if (contains(t, "total parameters") && contains(t, "size:")) {
      if (auto v = number_after(t, "size:", true)) out_.meta("framework_params", *v, number);
      const std::size_t m = t.find("Model ");
      const std::size_t sz = t.find(" size:");
      if (m != std::string_view::npos && sz != std::string_view::npos && sz > m + 6)
        out_.meta("model_name", std::string(trim(t.substr(m + 6, sz - m - 6))), number, false);
      return;
    }
    if (contains(t, "activation checkpointing to the model")) {
      out_.meta("recompute", contains(t, "selective") ? "selective" : "full", number);
      return;
    }
    if (const std::size_t b = t.find("Building ");
        b != std::string_view::npos && ends_with(trim(t), "with {")) {
      config_ = "{\n";
      config_depth_ = 1;
      config_line_ = number;
      return;
    }
    if (contains(t, "Finished saving the checkpoint") || contains(t, "Finished async checkpoint") ||
        contains(t, "Finished saving")) {
      Event e;
      e.kind = EventKind::kCheckpointSave;
      e.line = static_cast<std::uint32_t>(number);
      e.timestamp_s = out_.line_timestamp(t);
      if (auto v = number_after(t, " in ")) e.duration_s = *v;
      e.step = out_.has_last() ? out_.last().step : 0;
      e.detail = "checkpoint save";
      out_.add_event(std::move(e));
      return;
    }
    scanner_.scan(t, number, out_);
  }

  void finish_config(std::uint64_t) {
    config_depth_ = 0;
    nlohmann::json j = nlohmann::json::parse(config_, nullptr, false);
    config_.clear();
    if (j.is_discarded() || !j.is_object()) return;
    auto num = [](const nlohmann::json& o, const char* k) -> double {
      auto it = o.find(k);
      return (it != o.end() && it->is_number()) ? it->get<double>() : kUnknown;
    };
    const std::uint64_t line = config_line_;
    if (double d = num(j, "dim"); known(d)) out_.meta("hidden", d, line, false);
    if (double v = num(j, "vocab_size"); known(v)) out_.meta("vocab", v, line, false);
    if (double l = num(j, "n_layers"); known(l)) out_.meta("layers", l, line, false);
    if (double h = num(j, "n_heads"); known(h)) out_.meta("heads", h, line, false);
    if (double h = num(j, "n_kv_heads"); known(h)) out_.meta("kv_heads", h, line, false);
    if (auto it = j.find("layers"); it != j.end() && it->is_array() && !it->empty()) {
      out_.meta("layers", static_cast<double>(it->size()), line, false);
      const auto& first = (*it)[0];
      if (auto a = first.find("attention"); a != first.end() && a->is_object()) {
        if (double h = num(*a, "n_heads"); known(h)) out_.meta("heads", h, line, false);
        if (double h = num(*a, "n_kv_heads"); known(h)) out_.meta("kv_heads", h, line, false);
        if (double h = num(*a, "head_dim"); known(h)) out_.meta("head_dim", h, line, false);
      }
      if (auto f = first.find("feed_forward"); f != first.end() && f->is_object()) {
        if (auto w1 = f->find("w1"); w1 != f->end() && w1->is_object()) {
          if (double o = num(*w1, "out_features"); known(o)) out_.meta("ffn", o, line, false);
          if (f->contains("w3")) out_.meta("swiglu", 1.0, line, false);
        }
      }
    }
    // An output module is there when tied too ("enable_weight_tying": true shares its weight
    // with the embedding): the flag decides where the model prints it.
    if (auto t = j.find("enable_weight_tying"); t != j.end() && t->is_boolean())
      out_.meta("tied_embeddings", t->get<bool>() ? 1.0 : 0.0, line, false);
    else if (auto o = j.find("output"); o != j.end() && o->is_object())
      out_.meta("tied_embeddings", 0.0, line, false);
  }

  RunBuilder& out_;
  CommonMetaScanner scanner_;
  std::string config_;
  int config_depth_ = 0;
  std::uint64_t config_line_ = 0;
};

double sniff_torchtitan(std::string_view head, std::string_view) {
  double score = 0;
  std::size_t pos = 0;
  while ((pos = head.find("step:", pos)) != std::string_view::npos) {
    const std::size_t end = head.find('\n', pos);
    std::string_view l =
        head.substr(pos, end == std::string_view::npos ? head.size() - pos : end - pos);
    if (contains(l, "loss:") && (contains(l, "tps:") || contains(l, "tflops:"))) score += 2;
    pos += 5;
  }
  if (contains(head, "[titan]")) score += score > 0 ? 3 : 0.5;
  if (contains(head, "torchtitan")) score += score > 0 ? 1 : 0.3;
  return score;
}

}  // namespace

const FormatSpec& torchtitan_format() {
  static const FormatSpec spec{
      "torchtitan",
      "torchtitan step lines (loss, tps, tflops, mfu), ANSI colours allowed",
      sniff_torchtitan,
      make_line_parser<TorchtitanParser>,
      nullptr,
      nullptr,
      0,
      TimingKind::kAveraged};
  return spec;
}

}  // namespace mfu::detail
