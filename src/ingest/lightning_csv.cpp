// PyTorch Lightning CSVLogger metrics.csv: a header of every metric ever logged, one row per
// log call (rows of the same step may be split). ThroughputMonitor adds cumulative columns
// time, batches, samples, lengths and the rates device/flops_per_sec, device/mfu, ...
//   epoch,step,train_loss,time,batches,samples,lengths,device/mfu,device/flops_per_sec,...
#include <fmt/format.h>

#include <map>

#include "ingest/parser.hpp"
#include "io/csv.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// A ThroughputMonitor column without the stage Lightning 2.x puts before it ("train/time",
/// "train|device/mfu" -> "time", "device/mfu"); other stages' ("validate/time") and other
/// columns stay as they are.
std::string throughput_column(const std::string& h) {
  for (const char* stage : {"train/", "train|"}) {
    const std::string rest = h.substr(std::min(h.size(), std::string(stage).size()));
    if (starts_with(h, stage) && (rest == "time" || rest == "samples" || rest == "lengths" ||
                                  rest == "batches" || starts_with(rest, "device/")))
      return rest;
  }
  return h;
}

class LightningCsvParser : public LineParser {
 public:
  explicit LightningCsvParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view text, std::uint64_t number) override {
    std::string_view t = trim(text);
    if (t.empty()) return;
    auto fields = split_csv(t);
    if (header_.empty()) {
      for (auto& f : fields) header_.push_back(std::string(trim(f)));
      for (std::size_t i = 0; i < header_.size(); ++i) {
        const std::string h = throughput_column(header_[i]);
        if (h == "step")
          col_step_ = static_cast<int>(i);
        else if (h == "epoch")
          col_epoch_ = static_cast<int>(i);
        else if (h == "time")
          col_time_ = static_cast<int>(i);
        else if (h == "samples")
          col_samples_ = static_cast<int>(i);
        else if (h == "lengths")
          col_lengths_ = static_cast<int>(i);
        else if (h == "batches")
          col_batches_ = static_cast<int>(i);
        else if (h == "device/mfu")
          col_mfu_ = static_cast<int>(i);
        else if (h == "device/flops_per_sec")
          col_flops_ = static_cast<int>(i);
        else if (h == "train_loss" || h == "train_loss_step" || h == "loss" || h == "train/loss")
          col_loss_ = col_loss_ < 0 ? static_cast<int>(i) : col_loss_;
      }
      if (col_step_ < 0) out_.warn(number, "metrics.csv has no 'step' column");
      return;
    }
    if (fields.size() != header_.size()) {
      out_.malformed(number, fmt::format("row has {} fields, the header has {}", fields.size(),
                                         header_.size()));
      return;
    }
    auto get = [&](int col) -> double {
      if (col < 0) return kUnknown;
      auto d = parse_double(fields[static_cast<std::size_t>(col)]);
      return d ? *d : kUnknown;
    };
    const double step = get(col_step_);
    if (as_step(step) < 0) return;
    Row& r = rows_[as_step(step)];
    r.line = r.line ? r.line : number;
    auto fill = [](double& dst, double v) {
      if (known(v)) dst = v;
    };
    fill(r.time, get(col_time_));
    fill(r.samples, get(col_samples_));
    fill(r.lengths, get(col_lengths_));
    fill(r.batches, get(col_batches_));
    fill(r.mfu, get(col_mfu_));
    fill(r.flops, get(col_flops_));
    fill(r.loss, get(col_loss_));
  }

  void finish() override {
    // ThroughputMonitor's time/samples/lengths are cumulative: differences give each interval.
    double prev_time = kUnknown, prev_samples = kUnknown, prev_len = kUnknown,
           prev_batches = kUnknown;
    std::int64_t prev_step = -1;
    for (const auto& [step, r] : rows_) {
      Iteration it;
      it.step = step;
      it.line = static_cast<std::uint32_t>(r.line);
      it.loss = r.loss;
      if (known(r.mfu)) it.reported_mfu = r.mfu;
      if (known(r.flops)) it.reported_flops_per_gpu = r.flops;
      if (known(r.time) && known(prev_time) && step > prev_step && r.time > prev_time) {
        // Steps between rows: use the batches counter when present (it counts optimizer and
        // accumulation batches alike), else the step numbers.
        const double span = static_cast<double>(step - prev_step);
        it.time_s = (r.time - prev_time) / span;
        if (known(r.samples) && known(prev_samples)) it.samples = (r.samples - prev_samples) / span;
        if (known(r.lengths) && known(prev_len)) it.tokens = (r.lengths - prev_len) / span;
        (void)prev_batches;
      }
      if (known(r.time)) {
        prev_time = r.time;
        prev_samples = r.samples;
        prev_len = r.lengths;
        prev_batches = r.batches;
        prev_step = step;
      }
      if (known(r.time) || known(r.loss) || known(r.mfu)) out_.add(it);
    }
    if (col_time_ < 0)
      out_.info(0, "metrics.csv has no ThroughputMonitor 'time' column: no step times");
  }

 private:
  struct Row {
    std::uint64_t line = 0;
    double time = kUnknown, samples = kUnknown, lengths = kUnknown, batches = kUnknown,
           mfu = kUnknown, flops = kUnknown, loss = kUnknown;
  };
  RunBuilder& out_;
  std::vector<std::string> header_;
  std::map<std::int64_t, Row> rows_;
  int col_step_ = -1, col_epoch_ = -1, col_time_ = -1, col_samples_ = -1, col_lengths_ = -1,
      col_batches_ = -1, col_mfu_ = -1, col_flops_ = -1, col_loss_ = -1;
};

double sniff_lightning_csv(std::string_view head, std::string_view filename) {
  const std::size_t nl = head.find('\n');
  std::string_view first = trim(head.substr(0, nl));
  if (first.empty() || first.front() == '{') return 0;
  const auto cols = split_csv(first);
  bool step = false, epoch = false, lightning = false, native_time = false;
  for (const auto& c : cols) {
    step = step || c == "step";
    epoch = epoch || c == "epoch";
    lightning = lightning || starts_with(throughput_column(std::string(c)), "device/") ||
                c == "batches" || c == "lengths" || starts_with(c, "train_") ||
                starts_with(c, "val_") || starts_with(c, "lr-");
    native_time = native_time || c == "time_s" || c == "time_ms";
  }
  if (!step || native_time) return 0;
  double score = (epoch ? 2 : 0) + (lightning ? 2 : 0);
  if (contains(filename, "metrics") && ends_with(filename, ".csv")) score += 1;
  return score >= 2 ? score : 0;
}

}  // namespace

const FormatSpec& lightning_csv_format() {
  static const FormatSpec spec{
      "lightning-csv",
      "PyTorch Lightning CSVLogger metrics.csv (with ThroughputMonitor columns when present)",
      sniff_lightning_csv,
      make_line_parser<LightningCsvParser>,
      nullptr,
      nullptr,
      0,
      TimingKind::kAveraged,
      nullptr,
      false,
      true};
  return spec;
}

}  // namespace mfu::detail
