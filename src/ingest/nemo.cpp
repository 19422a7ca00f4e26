// NVIDIA NeMo console output, both generations:
//   NeMo 2 (nemo.lightning's progress printer), one line per logged step:
//     "Training epoch 0, iteration 49/49 | lr: 7.496e-06 | global_batch_size: 128 |
//      global_step: 49 | reduced_train_loss: 11.96 | train_step_timing in s: 12.39 |
//      consumed_samples: 6400"
//   NeMo 1 (PyTorch Lightning's tqdm bar, the logged metrics as its postfix):
//     "Epoch 0: : 100%|██████████| 50/50 [31:51<00:00, reduced_train_loss=6.130,
//      global_step=50.0, consumed_samples=76800.0, train_step_timing in s=5.900]"
// Sampling: `train_step_timing` is the time of the one step just logged (NeMo's timing
// callback, every log_every_n_steps); a record stands for the steps since the previous one,
// assumed as long. The bar is redrawn many times per logged step: redraws of one global_step are
// one record. A line without train_step_timing carries no time (NeMo 2 before its timing
// callback was on by default); the bar's elapsed clock then times the steps between redraws.
#include <fmt/format.h>

#include "ingest/parser.hpp"
#include "ingest/progress_bar.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// "key: value" (NeMo 2, separated by '|') or "key=value" (NeMo 1, separated by ',').
struct Field {
  std::string_view key;
  std::string_view value;
};

std::vector<Field> fields(std::string_view text, char separator, char assign) {
  std::vector<Field> out;
  for (auto part : split(text, separator)) {
    const std::size_t eq = part.rfind(assign);
    if (eq == std::string_view::npos) continue;
    out.push_back({trim(part.substr(0, eq)), trim(part.substr(eq + 1))});
  }
  return out;
}

std::optional<double> field_number(const std::vector<Field>& fs, std::string_view key) {
  for (const auto& f : fs)
    if (f.key == key) return parse_double(f.value);
  return std::nullopt;
}

/// "Training epoch 0, iteration 49/49 | ..." -> the iteration and the fields after it.
bool nemo2_line(std::string_view t) {
  return starts_with(t, "Training epoch ") && contains(t, ", iteration ") && contains(t, " | ");
}

bool nemo1_bar(std::string_view t) {
  return starts_with(t, "Epoch ") && contains(t, "|") &&
         (contains(t, "train_step_timing") || contains(t, "reduced_train_loss="));
}

class NemoParser : public LineParser {
 public:
  explicit NemoParser(RunBuilder& out) : out_(out) {}

  /// Each '\r' redraw of a tqdm bar comes as a line of its own (the line reader splits them);
  /// the last redraw of a step wins.
  void line(std::string_view raw, std::uint64_t number) override {
    const std::string_view t = trim(raw);
    if (nemo2_line(t)) {
      nemo2(t, number);
    } else if (nemo1_bar(t)) {
      nemo1(t, number);
    }
  }

 private:
  void nemo2(std::string_view t, std::uint64_t number) {
    const std::size_t bar = t.find(" | ");
    std::string_view head = t.substr(0, bar);
    const auto fs = fields(t.substr(bar + 3), '|', ':');
    std::optional<double> iteration = number_after(head, ", iteration ");
    record(fs, iteration, kUnknown, std::nullopt, number);
  }

  void nemo1(std::string_view t, std::uint64_t number) {
    const auto b = parse_bar(t);
    if (!b) {
      out_.malformed(number, "a NeMo progress bar without its 'n/total [elapsed<remaining' part");
      return;
    }
    record(fields(b->rest, ',', '='), b->n, b->elapsed_s, bar_seconds_per_step(*b), number);
  }

  void record(const std::vector<Field>& fs, std::optional<double> iteration, double elapsed_s,
              std::optional<double> rate_s, std::uint64_t number) {
    const auto global_step = field_number(fs, "global_step");
    if (!global_step && !iteration) return;
    Iteration it;
    it.step = as_step(global_step ? *global_step : *iteration);
    it.line = static_cast<std::uint32_t>(number);
    auto timing = field_number(fs, "train_step_timing in s");
    if (!timing) timing = field_number(fs, "train_step_timing");
    if (timing && *timing > 0) {
      it.time_s = *timing;
      out_.field("time");
    }
    if (auto v = field_number(fs, "reduced_train_loss")) it.loss = *v;
    if (known(it.loss)) out_.field("loss");
    if (auto gbs = field_number(fs, "global_batch_size"); gbs && *gbs > 0) {
      it.samples = *gbs;
      out_.meta("global_batch", *gbs, number, false);
      if (const auto seq = out_.run.meta.number("seq_len")) it.tokens = *gbs * *seq;
    }
    if (auto mem = field_number(fs, "peak_memory_usage"))
      out_.meta("peak_memory_bytes", *mem, number, false);
    time_from_bar(it, elapsed_s);
    if (!known(it.time_s) && rate_s && *rate_s > 0 && !known(prev_elapsed_s_)) {
      // The first redraw has no earlier one to difference: tqdm's own rate ("41.36s/it", a
      // moving average of the recent steps) times it.
      it.time_s = *rate_s;
      out_.field("time");
    }
    if (out_.has_last() && out_.last().step == it.step) {
      out_.replace_last(it);  // a redraw of the same logged step
      return;
    }
    out_.add(it);
  }

  /// Without train_step_timing: the bar's elapsed time between the first redraws that show
  /// this step and the step before, over the steps between them.
  void time_from_bar(Iteration& it, double elapsed_s) {
    if (!known(elapsed_s)) return;
    if (it.step != bar_step_) {
      prev_step_ = bar_step_;
      prev_elapsed_s_ = bar_elapsed_s_;
      bar_step_ = it.step;
      bar_elapsed_s_ = elapsed_s;
    }
    if (!known(it.time_s) && known(prev_elapsed_s_) && it.step > prev_step_ &&
        bar_elapsed_s_ >= prev_elapsed_s_) {
      it.time_s = (bar_elapsed_s_ - prev_elapsed_s_) / static_cast<double>(it.step - prev_step_);
      out_.field("time");
    }
  }

  RunBuilder& out_;
  std::int64_t bar_step_ = -1, prev_step_ = -1;
  double bar_elapsed_s_ = kUnknown, prev_elapsed_s_ = kUnknown;
};

double sniff_nemo(std::string_view head, std::string_view) {
  return score_lines(head, [](std::string_view t) {
    const bool nemo2 =
        nemo2_line(t) && (contains(t, "global_step") || contains(t, "reduced_train_loss"));
    return nemo2 || nemo1_bar(t) ? 3.0 : 0.0;
  });
}

}  // namespace

const FormatSpec& nemo_format() {
  static const FormatSpec spec{"nemo",
                               "NVIDIA NeMo 2 'Training epoch E, iteration I/N | ...' lines and "
                               "NeMo 1 Lightning progress bars",
                               sniff_nemo,
                               make_line_parser<NemoParser>,
                               nullptr,
                               nullptr,
                               0,
                               TimingKind::kSampled};
  return spec;
}

}  // namespace mfu::detail
