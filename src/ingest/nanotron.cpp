// Hugging Face nanotron console lines (nanotron/trainer.py's LogItem list, numbers printed in
// its human format: "634K", "28.2K", "25.2G", with 1000 as the base):
//   "01/17/2024 13:47:27 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 991 / 1000 |
//    consumed_tokens: 634K | elapsed_time_per_iteration_ms: 45 | tokens_per_sec: 14.2K |
//    tokens_per_sec_per_gpu: 1.78K | global_batch_size: 20 | lm_loss: 10.6 | lr: 1e-05 |
//    model_tflops_per_gpu: 0.00869 | hardware_tflops_per_gpu: 0.00869 | grad_norm: 0.515"
// Sampling: one line every iteration_step_info_interval steps, timing the iteration just run;
// a record stands for the steps since the previous line. tokens_per_sec over
// tokens_per_sec_per_gpu is the GPU count; model_tflops_per_gpu is the framework's FLOP/s.
#include <fmt/format.h>

#include <cmath>

#include "ingest/common_meta.hpp"
#include "ingest/parser.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// nanotron's human format: "634K", "1.02K", "547M", "45" -> the number. nanotron's
/// logging.py human_format prints 3 significant digits and the suffixes "", K, M, B, T, P, E
/// (base 1000); the logs of 2024 print G where later ones print B.
std::optional<double> si_number(std::string_view s) {
  std::string_view t = trim(s);
  const auto v = take_number(t);
  if (!v) return std::nullopt;
  t = trim(t);
  if (t.empty()) return *v;
  if (t.size() != 1) return std::nullopt;
  switch (t[0]) {
    case 'K': return *v * 1e3;
    case 'M': return *v * 1e6;
    case 'B':
    case 'G': return *v * 1e9;
    case 'T': return *v * 1e12;
    case 'P': return *v * 1e15;
    case 'E': return *v * 1e18;
    default: return std::nullopt;
  }
}

/// The value of "| key: value |" in `t` (the key whole: "tokens_per_sec" is not
/// "tokens_per_sec_per_gpu").
std::optional<double> field(std::string_view t, std::string_view key) {
  for (std::size_t p = t.find(key); p != std::string_view::npos; p = t.find(key, p + 1)) {
    const std::string_view after = t.substr(p + key.size());
    if (p < 2 || t.substr(p - 2, 2) != "| " || !starts_with(after, ": ")) continue;
    const std::string_view value = after.substr(2);
    return si_number(value.substr(0, value.find(" |")));
  }
  return std::nullopt;
}

/// "...]: iteration: 991 / 1000 | ..." -> position of "iteration: ".
std::size_t iteration_at(std::string_view t) {
  const std::size_t p = t.find("]: iteration: ");
  if (p == std::string_view::npos || !starts_with(t, "[")) return std::string_view::npos;
  return contains(t, "elapsed_time_per_iteration_ms") || contains(t, "tokens_per_sec")
             ? p + 3
             : std::string_view::npos;
}

class NanotronParser : public LineParser {
 public:
  explicit NanotronParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    const std::string_view t = trim(raw);
    const std::size_t at = iteration_at(t);
    if (at == std::string_view::npos) {
      scanner_.scan(t, number, out_);
      return;
    }
    std::string_view s = t.substr(at + 11);
    const auto step = take_number(s);
    if (!step || *step < 0) {
      out_.malformed(number, "cannot read the iteration number after 'iteration:'");
      return;
    }
    s = trim(s);
    if (starts_with(s, "/")) {
      s.remove_prefix(1);
      if (auto total = take_number(s)) out_.meta("train_iters", *total, number, false);
    }
    record(t.substr(at), as_step(*step), number);
  }

  void finish() override { scanner_.finish(out_); }

 private:
  void record(std::string_view t, std::int64_t step, std::uint64_t number) {
    Iteration it;
    it.step = step;
    it.line = static_cast<std::uint32_t>(number);
    if (auto ms = field(t, "elapsed_time_per_iteration_ms")) {
      if (!(*ms > 0)) {
        out_.malformed(number,
                       fmt::format("iteration {}: elapsed time {} ms is not positive", step, *ms));
        return;
      }
      it.time_s = *ms / 1000.0;
    }
    if (auto v = field(t, "lm_loss")) it.loss = *v;
    if (auto v = field(t, "global_batch_size")) it.samples = *v;
    const auto tps = field(t, "tokens_per_sec");
    if (tps && known(it.time_s)) it.tokens = *tps * it.time_s;
    if (auto per_gpu = field(t, "tokens_per_sec_per_gpu"); tps && per_gpu && *per_gpu > 0) {
      // The GPU count, where the ratio is a whole number (3-digit rounding: within 2%).
      const double gpus = *tps / *per_gpu;
      if (gpus >= 1 && std::fabs(gpus - std::round(gpus)) <= 0.02 * gpus)
        out_.meta("gpus", std::round(gpus), number, false);
    }
    if (auto v = field(t, "model_tflops_per_gpu")) {
      it.reported_flops_per_gpu = *v * 1e12;
      out_.meta("framework_flops_by", "nanotron", number, false);
    }
    out_.add(it);
  }

  RunBuilder& out_;
  CommonMetaScanner scanner_;
};

double sniff_nanotron(std::string_view head, std::string_view) {
  return score_lines(head, [](std::string_view l) {
    return iteration_at(l) != std::string_view::npos ? 3.0 : 0.0;
  });
}

}  // namespace

const FormatSpec& nanotron_format() {
  static const FormatSpec spec{"nanotron",
                               "Hugging Face nanotron '[INFO|DP=0|...]: iteration: N / M | ...'",
                               sniff_nanotron,
                               make_line_parser<NanotronParser>,
                               nullptr,
                               nullptr,
                               0,
                               TimingKind::kSampled};
  return spec;
}

}  // namespace mfu::detail
