// MLPerf Training result logs: ":::MLLOG {json}" lines (mlcommons/logging) and the optional
// ":::SYSJSON {json}" system description. Records are the training blocks (block_start to
// block_stop, or the spans between tracked_stats points when a benchmark logs no blocks);
// evaluation and initialisation intervals become events.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "ingest/parser.hpp"
#include "ingest/system_json.hpp"
#include "json_fields.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

double num(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return kUnknown;
  auto it = j.find(key);
  return (it != j.end() && it->is_number()) ? it->get<double>() : kUnknown;
}

class MlperfParser : public LineParser {
 public:
  explicit MlperfParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view text, std::uint64_t number) override {
    const std::size_t p = text.find(":::MLLOG");
    if (p == std::string_view::npos) {
      if (const std::size_t s = text.find(":::SYSJSON"); s != std::string_view::npos) {
        nlohmann::json j = nlohmann::json::parse(text.substr(s + 10), nullptr, false);
        if (!j.is_discarded()) apply_system_json(j, number, out_);
      }
      return;
    }
    nlohmann::json j = nlohmann::json::parse(text.substr(p + 8), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      out_.malformed(number, "an :::MLLOG line whose JSON does not parse");
      return;
    }
    const std::string key = detail::string_field(j, "key");
    const double t = num(j, "time_ms") / 1000.0;
    if (known(t)) out_.timestamp(t);
    const nlohmann::json meta = j.contains("metadata") ? j["metadata"] : nlohmann::json::object();
    const nlohmann::json& value = j.contains("value") ? j["value"] : nlohmann::json();
    if (key == "submission_benchmark" && value.is_string()) {
      benchmark_ = value.get<std::string>();
      out_.meta("benchmark", benchmark_, number);
      if (benchmark_ == "gpt3") out_.meta("model_name", "gpt3-175b", number, false);
    } else if (key == "global_batch_size" && value.is_number()) {
      gbs_ = value.get<double>();
      out_.meta("global_batch", gbs_, number);
    } else if (key == "max_sequence_length" && value.is_number()) {
      seq_ = value.get<double>();
      out_.meta("seq_len", seq_, number);
    } else if (key == "train_samples" && value.is_number()) {
      train_samples_ = value.get<double>();
    } else if (key == "gradient_accumulation_steps" && value.is_number()) {
      out_.meta("grad_accum", value.get<double>(), number);
    } else if (key == "submission_platform" && value.is_string()) {
      out_.meta("platform", value.get<std::string>(), number);
    } else if (key == "num_layers" && value.is_number()) {
      out_.meta("layers", value.get<double>(), number);
    } else if (key == "hidden_size" && value.is_number()) {
      out_.meta("hidden", value.get<double>(), number);
    } else if (key == "num_heads" && value.is_number()) {
      out_.meta("heads", value.get<double>(), number);
    } else if (key == "init_start") {
      if (!known(init_start_)) init_start_ = t;
    } else if (key == "init_stop") {
      if (known(init_start_) && known(t)) {
        Event e;
        e.kind = EventKind::kStartup;
        e.timestamp_s = t;
        e.duration_s = t - init_start_;
        e.line = static_cast<std::uint32_t>(number);
        e.detail = "initialisation (init_start to init_stop; not part of MLPerf time-to-train)";
        out_.add_event(std::move(e));
      }
    } else if (key == "run_start") {
      run_start_ = t;
      last_point_t_ = t;
      last_point_p_ = 0;
    } else if (key == "run_stop") {
      if (known(run_start_)) out_.meta("time_to_train_s", t - run_start_, number);
      if (meta.contains("status") && meta["status"].is_string())
        out_.meta("status", meta["status"].get<std::string>(), number);
    } else if (key == "epoch_start" && known(run_start_) && last_point_t_ == run_start_ &&
               known(t) && t > run_start_) {
      // Set-up between run_start and the first epoch (R-GAT loads its graph there): inside
      // MLPerf's time-to-train, but no training step's.
      Event e;
      e.kind = EventKind::kStartup;
      e.timestamp_s = t;
      e.duration_s = t - run_start_;
      e.line = static_cast<std::uint32_t>(number);
      e.detail = "run_start to the first epoch_start";
      out_.add_event(std::move(e));
      last_point_t_ = t;
    } else if (key == "eval_start") {
      eval_start_ = t;
    } else if (key == "eval_stop") {
      if (known(eval_start_) && known(t)) {
        Event e;
        e.kind = EventKind::kEval;
        e.timestamp_s = t;
        e.duration_s = t - eval_start_;
        e.line = static_cast<std::uint32_t>(number);
        e.step = out_.has_last() ? out_.last().step : 0;
        e.detail = "evaluation";
        eval_in_span_ += t - eval_start_;
        out_.add_event(std::move(e));
      }
      eval_start_ = kUnknown;
    } else if (key == "block_start") {
      block_start_t_ = t;
      block_start_p_ = progress(meta, true);
    } else if (key == "block_stop") {
      double end_p = progress(meta, false);
      if (!known(end_p) && known(block_start_p_) && known(pending_count_))
        end_p = block_start_p_ + pending_count_;
      if (auto it = span(block_start_t_, t, block_start_p_, end_p, number, 0.0)) {
        it->rank = out_.line_attrs().rank;  // the records are added at the end
        blocks_.push_back(*it);
      }
      block_start_t_ = kUnknown;
    } else if (key == "tracked_stats") {
      // Evaluation batches ("validation_step_time", MLPerf v5) count with their own counter, and
      // warm-up or init figures are no training progress.
      const double p2 = training_stats(value) ? progress(meta, false) : kUnknown;
      if (known(p2)) {
        // Spans between progress points, without the evaluation time inside them.
        if (auto it = span(last_point_t_, t, last_point_p_, p2, number, eval_in_span_)) {
          it->rank = out_.line_attrs().rank;
          points_.push_back(*it);
        }
        eval_in_span_ = 0;
        last_point_t_ = t;
        last_point_p_ = p2;
      }
    }
  }

  void finish() override {
    for (const auto& it : blocks_.empty() ? points_ : blocks_) out_.add(it);
    if (out_.run.iterations.empty()) {
      out_.info(0,
                "no training blocks or tracked_stats with progress counters: only events and run "
                "times were read");
    }
  }

 private:
  /// tracked_stats of the training: none of its values is an evaluation's, a warm-up's or
  /// the initialisation's.
  static bool training_stats(const nlohmann::json& value) {
    if (!value.is_object() || value.empty()) return false;
    for (const auto& [k, v] : value.items())
      if (k.rfind("validation", 0) == 0 || k.rfind("eval", 0) == 0 || k == "warmup_time" ||
          k == "init_finished")
        return false;
    return true;
  }

  /// Progress in samples from block/stats metadata. The optimizer step, where given as a
  /// whole number, wins: mlperf_common's blocks (v5) give the block's own samples_count beside
  /// the run's step ("samples_count": 12288, "step": 768). Epochs are counted in the units of
  /// each benchmark (to_samples).
  double progress(const nlohmann::json& meta, bool start) {
    const double step = num(meta, "step");
    if (known(step) && step == std::floor(step) && known(gbs_) && gbs_ > 0) return step * gbs_;
    if (const double s = num(meta, "samples_count"); known(s)) return s;
    double epoch = num(meta, "epoch_num");
    if (!known(epoch)) epoch = step;  // DLRM puts its epoch fraction under "step"
    if (known(epoch)) return to_samples(epoch);
    const double first = num(meta, "first_epoch_num");
    const double count = num(meta, "epoch_count");
    if (start) {
      if (known(count)) pending_count_ = to_samples(count);
      return known(first) ? to_samples(first) : kUnknown;
    }
    if (known(first) && known(count)) return to_samples(first + count);
    return kUnknown;
  }

  /// An epoch count in samples: GPT-3 counts tokens, BERT counts samples already (its "epoch"
  /// values are in the hundreds of thousands), the others count epochs of train_samples (R-GAT
  /// stops at epoch 0.9, DLRM at 0.75).
  double to_samples(double epochs) const {
    if (benchmark_ == "gpt3" && known(seq_) && seq_ > 0) return epochs / seq_;
    if (known(train_samples_) && train_samples_ > 0 && epochs < 1000)
      return epochs * train_samples_;
    return epochs;
  }

  std::optional<Iteration> span(double t0, double t1, double p0, double p1, std::uint64_t number,
                                double eval) const {
    if (!known(t0) || !known(t1) || !known(p0) || !known(p1) || !known(gbs_) || gbs_ <= 0 ||
        p1 <= p0 || t1 <= t0) {
      return std::nullopt;
    }
    const double steps = std::max(1.0, std::round((p1 - p0) / gbs_));
    if (as_step(std::round(p1 / gbs_)) < 0 || steps > (1 << 30))
      return std::nullopt;  // nonsense counters
    Iteration it;
    it.step = as_step(std::round(p1 / gbs_));
    it.count = static_cast<std::uint32_t>(steps);
    it.line = static_cast<std::uint32_t>(number);
    it.timestamp_s = t1;
    it.time_s = ((t1 - t0) - eval) / steps;
    it.samples = gbs_;
    if (known(seq_)) it.tokens = gbs_ * seq_;
    if (!(it.time_s > 0)) return std::nullopt;
    return it;
  }

  RunBuilder& out_;
  std::string benchmark_;
  double gbs_ = kUnknown;
  double seq_ = kUnknown;
  double train_samples_ = kUnknown;
  double init_start_ = kUnknown;
  double run_start_ = kUnknown;
  double eval_start_ = kUnknown;
  double eval_in_span_ = 0;
  double block_start_t_ = kUnknown;
  double block_start_p_ = kUnknown;
  double pending_count_ = kUnknown;
  double last_point_t_ = kUnknown;
  double last_point_p_ = kUnknown;
  std::vector<Iteration> blocks_;
  std::vector<Iteration> points_;
};

double sniff_mlperf(std::string_view head, std::string_view) {
  std::size_t pos = 0;
  int n = 0;
  while ((pos = head.find(":::MLLOG", pos)) != std::string_view::npos && n < 100) {
    // A record line: ":::MLLOG {" followed by its JSON (not a mention in prose).
    std::size_t j = pos + 8;
    while (j < head.size() && head[j] == ' ') ++j;
    if (j < head.size() && head[j] == '{' && head.find("\"key\"", j) < head.find('\n', j)) ++n;
    pos += 8;
  }
  return n * 3.0;
}

}  // namespace

const FormatSpec& mlperf_format() {
  static const FormatSpec spec{
      "mlperf",
      "MLPerf Training :::MLLOG result logs (with :::SYSJSON or *_system.json)",
      sniff_mlperf,
      make_line_parser<MlperfParser>,
      nullptr,
      nullptr,
      0,
      TimingKind::kAveraged};
  return spec;
}

}  // namespace mfu::detail
