// AllenAI OLMo's trainer (olmo/train.py, log_metrics_to_console): a header line, then one
// "key=value" line per metric, indented, numbers with thousands separators:
//   "2024-08-06 10:00:05.520 host:0  olmo.train:908  INFO    [step=2/739328,epoch=0]"
//   "    train/CrossEntropyLoss=1.787e-06"
//   "    throughput/total_tokens=2,097,152"
//   "    throughput/total_training_Gflops=10,207,281"
//   "    throughput/device/batches_per_second=0.0254"
// One block every console_log_interval steps: a record stands for the steps since the previous
// block. total_tokens and total_training_Gflops count from the start over all devices, so a
// record's tokens and model FLOPs are their growth over its steps; its time comes from the
// headers' timestamps (or 1 / batches_per_second, the speed monitor's rate, without them).
#include <fmt/format.h>

#include <cmath>

#include "ingest/common_meta.hpp"
#include "ingest/parser.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// "... INFO    [step=2/739328,epoch=0]" -> position of "[step=", npos otherwise.
std::size_t header_at(std::string_view t) {
  const std::size_t p = t.find("[step=");
  if (p == std::string_view::npos || !contains(t.substr(p), "/")) return std::string_view::npos;
  return contains(t.substr(0, p), "INFO") ? p : std::string_view::npos;
}

/// "throughput/total_tokens=2,097,152" -> the key and the number (none for other lines).
std::optional<std::pair<std::string_view, double>> metric(std::string_view t) {
  const std::size_t eq = t.find('=');
  if (eq == std::string_view::npos || eq == 0 || contains(t.substr(0, eq), " "))
    return std::nullopt;
  std::string_view v = t.substr(eq + 1);
  const auto n = take_number(v, true);
  if (!n || !trim(v).empty()) return std::nullopt;
  return std::make_pair(t.substr(0, eq), *n);
}

class OlmoParser : public LineParser {
 public:
  explicit OlmoParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    const std::string_view t = trim(raw);
    if (const std::size_t at = header_at(t); at != std::string_view::npos) {
      close();
      open(t.substr(at + 6), number);
      return;
    }
    if (open_) {
      if (auto m = metric(t)) return take(m->first, m->second);
      close();
    }
    scanner_.scan(t, number, out_);
  }

  void finish() override {
    close();
    scanner_.finish(out_);
  }

 private:
  void open(std::string_view s, std::uint64_t number) {
    const auto step = take_number(s);
    if (!step || *step < 0) {
      out_.malformed(number, "an OLMo metrics header without its step ('[step=N/M')");
      return;
    }
    if (starts_with(s, "/"))
      if (s.remove_prefix(1); auto total = take_number(s))
        out_.meta("train_iters", *total, number, false);
    block_ = Iteration{};
    block_.step = as_step(*step);
    block_.line = static_cast<std::uint32_t>(number);
    block_.timestamp_s = out_.line_timestamp(s);
    batches_per_s_ = kUnknown;
    open_ = true;
  }

  void take(std::string_view key, double v) {
    if (key == "train/CrossEntropyLoss") {
      block_.loss = v;
    } else if (key == "throughput/total_tokens") {
      tokens_now_ = v;
    } else if (key == "throughput/total_training_Gflops") {
      gflops_now_ = v;
    } else if (key == "throughput/device/batches_per_second") {
      batches_per_s_ = v;
    } else if (key == "throughput/device/tokens_per_second") {
      tokens_per_s_per_device_ = v;
    }
  }

  /// The block is complete: its growth since the previous block, over the steps between.
  void close() {
    if (!open_) return;
    open_ = false;
    const double steps = static_cast<double>(block_.step - last_step_);
    if (steps > 0) {
      if (known(tokens_now_) && tokens_now_ >= tokens_before_)
        block_.tokens = (tokens_now_ - tokens_before_) / steps;
      if (known(gflops_now_) && gflops_now_ >= gflops_before_)
        block_.model_flops = (gflops_now_ - gflops_before_) * 1e9 / steps;
    }
    if (!known(block_.timestamp_s) && known(batches_per_s_) && batches_per_s_ > 0)
      block_.time_s = 1.0 / batches_per_s_;
    devices(steps);
    if (known(block_.loss)) out_.field("loss");
    if (known(block_.tokens)) out_.field("tokens");
    if (known(block_.model_flops)) out_.meta("framework_flops_by", "olmo", block_.line, false);
    out_.add(block_);
    last_step_ = block_.step;
    if (known(tokens_now_)) tokens_before_ = tokens_now_;
    if (known(gflops_now_)) gflops_before_ = gflops_now_;
    tokens_now_ = gflops_now_ = kUnknown;
  }

  /// The device count: the job's tokens per second (its growth over the headers' clock) over
  /// one device's, where that is a whole number (within 2%).
  void devices(double steps) {
    if (!known(block_.tokens) || !known(tokens_per_s_per_device_) ||
        !(tokens_per_s_per_device_ > 0) || !known(block_.timestamp_s) || !known(last_timestamp_) ||
        !(steps > 0))
      return remember_time();
    const double seconds = block_.timestamp_s - last_timestamp_;
    if (seconds > 0) {
      const double n = block_.tokens * steps / seconds / tokens_per_s_per_device_;
      if (n >= 0.98 && std::fabs(n - std::round(n)) <= 0.02 * n)
        out_.meta("gpus", std::round(n), block_.line, false);
    }
    remember_time();
  }

  void remember_time() {
    last_timestamp_ = block_.timestamp_s;
    tokens_per_s_per_device_ = kUnknown;
  }

  RunBuilder& out_;
  CommonMetaScanner scanner_;
  Iteration block_;
  bool open_ = false;
  std::int64_t last_step_ = 0;
  double tokens_before_ = 0, gflops_before_ = 0;
  double tokens_now_ = kUnknown, gflops_now_ = kUnknown, batches_per_s_ = kUnknown;
  double tokens_per_s_per_device_ = kUnknown, last_timestamp_ = kUnknown;
};

double sniff_olmo(std::string_view head, std::string_view) {
  return score_lines(head, [](std::string_view t) {
    if (header_at(t) != std::string_view::npos && contains(t, ",epoch=")) return 3.0;
    return starts_with(t, "throughput/total_tokens=") ? 1.0 : 0.0;
  });
}

}  // namespace

const FormatSpec& olmo_format() {
  static const FormatSpec spec{
      "olmo",     "AllenAI OLMo '[step=N/M,epoch=E]' blocks of key=value metrics",
      sniff_olmo, make_line_parser<OlmoParser>,
      nullptr,    nullptr,
      0,          TimingKind::kAveraged};
  return spec;
}

}  // namespace mfu::detail
