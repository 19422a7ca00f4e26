// MaxText (AI-Hypercomputer/maxtext metric_logger.py) step lines, with or without absl prefix:
//   I0811 21:55:06.119312 1383 metric_logger.py:226] completed step: 2, seconds: 10.228,
//   TFLOP/s/device: 350.869, Tokens/s/device: 19222.175, total_weights: 1572864, loss: 12.980
// and the older "TFLOP/s: ..." form. total_weights is the global count of target tokens, so
// devices = total_weights / (Tokens/s/device * seconds). Sampling: every step prints its own
// line and time, so each record is one iteration.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "ingest/common_meta.hpp"
#include "ingest/parser.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

class MaxTextParser : public LineParser {
 public:
  explicit MaxTextParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view text, std::uint64_t number) override {
    const std::size_t p = text.find("completed step:");
    if (p == std::string_view::npos) {
      if (!text.empty()) out_.timestamp(out_.line_timestamp(text));
      if (contains(text, "Number of model params=")) {
        if (auto v = number_after(text, "Number of model params=")) {
          std::string_view rest = text.substr(text.find("params=") + 7);
          (void)take_number(rest);
          rest = trim(rest);
          const double m = starts_with(rest, "billion")   ? 1e9
                           : starts_with(rest, "million") ? 1e6
                                                          : 1.0;
          out_.meta("framework_params", *v * m, number, false);
        }
      }
      scanner_.scan(text, number, out_);
      return;
    }
    std::string_view t = text.substr(p);
    Iteration it;
    it.line = static_cast<std::uint32_t>(number);
    it.timestamp_s = out_.line_timestamp(text);
    auto step = number_after(t, "completed step:");
    auto secs = number_after(t, "seconds:");
    if (!step || !secs || !(*secs > 0) || !std::isfinite(*secs)) {
      out_.malformed(number, "a MaxText 'completed step' line without a positive 'seconds' value");
      return;
    }
    it.step = as_step(*step);
    it.time_s = *secs;
    auto tflops = number_after(t, "TFLOP/s/device:");
    if (!tflops) tflops = number_after(t, "TFLOP/s:");
    if (tflops) {
      it.reported_flops_per_gpu = *tflops * 1e12;
      out_.meta("framework_flops_by", "maxtext", number, false);
    }
    auto tok_dev = number_after(t, "Tokens/s/device:");
    auto weights = number_after(t, "total_weights:");
    if (weights) it.tokens = *weights;
    if (tok_dev && weights && *tok_dev > 0) {
      const double devices = *weights / (*tok_dev * *secs);
      if (std::fabs(devices - std::round(devices)) < 0.05 && devices >= 0.5)
        devices_.push_back(std::round(devices));
    }
    if (auto v = number_after(t, "loss:")) it.loss = *v;
    out_.add(it);
  }

  void finish() override {
    scanner_.finish(out_);
    if (devices_.size() >= 1) {
      // The most common inferred device count (the first step may be skewed).
      std::map<double, int> votes;
      for (double d : devices_) ++votes[d];
      double best = 0;
      int n = 0;
      for (auto [d, c] : votes)
        if (c > n) {
          best = d;
          n = c;
        }
      out_.run.meta.set("gpus", best, "inferred: total_weights / (Tokens/s/device x seconds)",
                        false);
    }
  }

 private:
  RunBuilder& out_;
  CommonMetaScanner scanner_;
  std::vector<double> devices_;
};

double sniff_maxtext(std::string_view head, std::string_view) {
  std::size_t pos = 0;
  int n = 0;
  while ((pos = head.find("completed step:", pos)) != std::string_view::npos && n < 100) {
    const std::size_t end = head.find('\n', pos);
    if (contains(head.substr(pos, end - pos), "seconds:")) ++n;
    pos += 10;
  }
  return n * 3.0;
}

}  // namespace

const FormatSpec& maxtext_format() {
  static const FormatSpec spec{"maxtext",
                               "MaxText 'completed step: N, seconds: X, TFLOP/s/device: ...' lines",
                               sniff_maxtext,
                               make_line_parser<MaxTextParser>,
                               nullptr,
                               nullptr,
                               0,
                               TimingKind::kPerIteration};
  return spec;
}

}  // namespace mfu::detail
