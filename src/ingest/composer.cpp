// MosaicML Composer's console logger (composer/loggers/console_logger.py), as llm-foundry's
// train.py and LLM-Shearing print it: every console_log_interval batches a header, then one
// indented "Train KEY: VALUE" line per metric, floats to four decimals:
//   "[epoch=1][batch=5/5]:"            (or "[batch=10/20]:")
//   "	 Train time/batch: 4"           batches done before this one
//   "	 Train time/token: 29254495"    tokens of all ranks before this batch
//   "	 Train throughput/tokens_per_sec: 20082.8418"
//   "	 Train time/train: 0.5249"       hours of training so far (time/val: of evaluation)
// A record stands for the batches since the previous block. Its time is the growth of
// time/train over them; where that is under 36 s (the clock prints 0.0001 h = 0.36 s steps, so
// 1% or worse), the speed monitor's rate over its window is used instead. Its tokens are the
// growth of time/token per batch; time/val's growth is an evaluation. The GPU count comes from
// the Config block (num_gpus_per_node x num_nodes) or from tokens/s over one device's.
#include <fmt/format.h>

#include <cmath>

#include "ingest/common_meta.hpp"
#include "ingest/parser.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

constexpr double kClockStep_s = 0.36;  // 0.0001 h, the last digit time/train prints
constexpr double kClockTrusted_s = 100 * kClockStep_s;

/// "[epoch=1][batch=5/5]:" or "[batch=10/20]:" -> the text after "[batch=", npos otherwise.
std::size_t header_at(std::string_view t) {
  if (!ends_with(t, "]:")) return std::string_view::npos;
  if (!starts_with(t, "[batch=") && !starts_with(t, "[epoch=")) return std::string_view::npos;
  const std::size_t p = t.find("[batch=");
  return p == std::string_view::npos ? p : p + 7;
}

/// "Train throughput/tokens_per_sec: 20082.8418" -> key and number (none for other lines).
std::optional<std::pair<std::string_view, double>> train_metric(std::string_view t) {
  if (!starts_with(t, "Train ")) return std::nullopt;
  t.remove_prefix(6);
  const std::size_t colon = t.find(": ");
  if (colon == std::string_view::npos || contains(t.substr(0, colon), " ")) return std::nullopt;
  std::string_view v = t.substr(colon + 2);
  const auto n = take_number(v);
  if (!n || !trim(v).empty()) return std::nullopt;
  return std::make_pair(t.substr(0, colon), *n);
}

/// What one block prints (NaN when it does not).
struct Block {
  std::int64_t header_batch = -1;
  std::uint64_t line = 0;
  double batches_done = kUnknown, tokens_done = kUnknown, samples_done = kUnknown;
  double train_h = kUnknown, val_h = kUnknown;
  double batches_per_s = kUnknown, samples_per_s = kUnknown, tokens_per_s = kUnknown;
  double device_tokens_per_s = kUnknown, device_flops = kUnknown, device_mfu = kUnknown;
  double loss = kUnknown;

  void take(std::string_view key, double v) {
    static const std::pair<std::string_view, double Block::*> kFields[] = {
        {"time/batch", &Block::batches_done},
        {"time/token", &Block::tokens_done},
        {"time/sample", &Block::samples_done},
        {"time/train", &Block::train_h},
        {"time/val", &Block::val_h},
        {"throughput/batches_per_sec", &Block::batches_per_s},
        {"throughput/samples_per_sec", &Block::samples_per_s},
        {"throughput/tokens_per_sec", &Block::tokens_per_s},
        {"throughput/device/tokens_per_sec", &Block::device_tokens_per_s},
        {"throughput/device/flops_per_sec", &Block::device_flops},
        {"throughput/device/mfu", &Block::device_mfu},
        {"loss/train/total", &Block::loss}};
    for (const auto& [name, field] : kFields)
      if (key == name) this->*field = v;
  }
  [[nodiscard]] std::int64_t step() const {
    return known(batches_done) ? as_step(batches_done + 1) : header_batch;
  }
};

/// Growth of a running count between two blocks, per batch of `batches` (NaN when unknown).
double per_batch(double now, double before, double batches) {
  if (!known(now) || !known(before) || !(batches > 0) || now < before) return kUnknown;
  return (now - before) / batches;
}

class ComposerParser : public LineParser {
 public:
  explicit ComposerParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    const std::string_view t = trim(raw);
    if (const std::size_t at = header_at(t); at != std::string_view::npos) {
      close();
      open(t.substr(at), number);
      return;
    }
    if (open_) {
      if (auto m = train_metric(t)) return block_.take(m->first, m->second);
      if (starts_with(t, "Train ")) return;  // a metric that is not a number (a W&B image)
      close();
    }
    config_line(t, number);
    scanner_.scan(t, number, out_);
  }

  void finish() override {
    close();
    scanner_.finish(out_);
  }

 private:
  void open(std::string_view s, std::uint64_t number) {
    const auto batch = take_number(s);
    if (!batch || *batch < 0) {
      out_.malformed(number, "a Composer metrics header without its batch ('[batch=N/M]:')");
      return;
    }
    block_ = Block{};
    block_.header_batch = as_step(*batch);
    block_.line = number;
    if (starts_with(s, "/"))
      if (s.remove_prefix(1); auto total = take_number(s))
        out_.meta("train_iters", *total, number, false);
    open_ = true;
  }

  /// Composer's Config block: "num_gpus_per_node: 8", "num_nodes: 2".
  void config_line(std::string_view t, std::uint64_t number) {
    if (auto v = number_after(t, "num_gpus_per_node:"); v && starts_with(t, "num_gpus_per_node"))
      out_.meta("gpus_per_node", *v, number, false);
    if (auto v = number_after(t, "num_nodes:"); v && starts_with(t, "num_nodes"))
      out_.meta("nodes", *v, number, false);
  }

  void close() {
    if (!open_) return;
    open_ = false;
    const Block& b = block_;
    Iteration it;
    it.step = b.step();
    it.line = static_cast<std::uint32_t>(b.line);
    it.loss = b.loss;
    const bool continues = it.step > last_.step();
    if (!continues) last_ = Block{};  // a resumed run counts again: no growth to take
    const double batches = static_cast<double>(it.step - std::max<std::int64_t>(last_.step(), 0));
    it.count = continues ? static_cast<std::uint32_t>(std::min(batches, 1e9)) : 1;
    counts(b, it);
    it.time_s = batch_seconds(b, it, continues ? batches : kUnknown);
    if (continues) evaluation(b, it.step);
    framework_figures(b, it);
    if (known(it.time_s)) out_.field("time");
    if (known(it.loss)) out_.field("loss");
    if (known(it.tokens)) out_.field("tokens");
    out_.add(it);
    last_ = b;
  }

  /// Tokens and samples of one batch: the counts' growth since the previous block, else their
  /// mean over the batches so far.
  void counts(const Block& b, Iteration& it) const {
    const double done = per_batch(b.batches_done, last_.batches_done, 1);
    it.tokens = per_batch(b.tokens_done, last_.tokens_done, done);
    it.samples = per_batch(b.samples_done, last_.samples_done, done);
    if (!known(it.tokens)) it.tokens = per_batch(b.tokens_done, 0, b.batches_done);
    if (!known(it.samples)) it.samples = per_batch(b.samples_done, 0, b.batches_done);
    if (!(it.tokens > 0)) it.tokens = kUnknown;
    if (!(it.samples > 0)) it.samples = kUnknown;
  }

  /// Seconds per batch: time/train's growth over the batches, unless that is too short for
  /// its 0.36 s resolution and the speed monitor gives a rate.
  double batch_seconds(const Block& b, const Iteration& it, double batches) const {
    const double clock_s =
        per_batch(b.train_h * 3600, known(last_.train_h) ? last_.train_h * 3600 : 0, 1);
    const double rate_s = known(it.samples) && b.samples_per_s > 0 ? it.samples / b.samples_per_s
                          : known(it.tokens) && b.tokens_per_s > 0 ? it.tokens / b.tokens_per_s
                          : b.batches_per_s > 0                    ? 1 / b.batches_per_s
                                                                   : kUnknown;
    const bool clock_usable = known(clock_s) && clock_s > 0 && batches > 0;
    if (clock_usable && (clock_s >= kClockTrusted_s || !known(rate_s))) return clock_s / batches;
    return rate_s;
  }

  /// time/val grows by the evaluation passes run since the previous block.
  void evaluation(const Block& b, std::int64_t step) {
    const double before = known(last_.val_h) ? last_.val_h : 0;
    if (!known(b.val_h) || b.val_h * 3600 - before * 3600 < kClockStep_s) return;
    Event e;
    e.kind = EventKind::kEval;
    e.step = step;
    e.duration_s = (b.val_h - before) * 3600;
    e.line = static_cast<std::uint32_t>(b.line);
    e.detail = "evaluation (Composer time/val)";
    out_.add_event(e);
  }

  /// The speed monitor's own figures: MFU and FLOP/s per device, and the device count as the
  /// job's tokens/s over one device's where that is a whole number (within 2%).
  void framework_figures(const Block& b, Iteration& it) {
    if (b.device_flops > 0) {
      it.reported_flops_per_gpu = b.device_flops;
      out_.meta("framework_flops_by", "composer", b.line, false);
    }
    if (known(b.device_mfu)) it.reported_mfu = b.device_mfu;
    if (b.tokens_per_s > 0 && b.device_tokens_per_s > 0) {
      const double n = b.tokens_per_s / b.device_tokens_per_s;
      if (n >= 0.98 && std::fabs(n - std::round(n)) <= 0.02 * n &&
          !out_.run.meta.has("gpus_per_node"))
        out_.meta("gpus", std::round(n), b.line, false);
    }
  }

  RunBuilder& out_;
  CommonMetaScanner scanner_;
  Block block_, last_;
  bool open_ = false;
};

double sniff_composer(std::string_view head, std::string_view) {
  return score_lines(head, [](std::string_view t) {
    if (header_at(t) != std::string_view::npos) return 3.0;
    return starts_with(t, "Train time/") || starts_with(t, "Train throughput/") ? 1.0 : 0.0;
  });
}

}  // namespace

const FormatSpec& composer_format() {
  static const FormatSpec spec{"composer",
                               "MosaicML Composer / llm-foundry '[batch=N/M]:' blocks of "
                               "'Train key: value' metrics",
                               sniff_composer,
                               make_line_parser<ComposerParser>,
                               nullptr,
                               nullptr,
                               0,
                               TimingKind::kAveraged};
  return spec;
}

}  // namespace mfu::detail
