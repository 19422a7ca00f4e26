// LLaMA-Factory's trainer_log.jsonl (llamafactory/train/callbacks.py, LogCallback.on_log), one
// JSON object each time the Hugging Face Trainer logs:
//   {"current_steps": 10, "total_steps": 6566, "loss": 0.8548, "lr": 9.99e-06, "epoch": 0.0107,
//    "percentage": 0.15, "elapsed_time": "0:02:12", "remaining_time": "1 day, 0:08:23"}
// (before 2024 "learning_rate", and "eval_loss"/"predict_loss"/"reward" as null.) What a record
// covers: the steps since the previous line, timed by the difference of elapsed_time (whole
// seconds since training began, "4 days, 7:18:24" past a day). A line with eval_loss and no
// loss is an evaluation at its step; its elapsed time since the line before is the evaluation's.
// total_tokens (include_num_input_tokens_seen) counts the input tokens seen by all processes.
// Several processes that write one file (independent launches) repeat every step, each on its
// own clock and pace: lines are given to the process whose last step and clock precede them,
// the first line of each step is kept (timed against its own process's previous line), and that
// is said. A clock that starts again below every process's is a resumed job.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

#include "ingest/parser.hpp"
#include "ingest/progress_bar.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// "0:02:12", "1 day, 0:08:23", "4 days, 7:18:24" (Python's timedelta) -> seconds.
std::optional<double> timedelta_seconds(std::string_view s) {
  s = trim(s);
  double days = 0;
  if (const std::size_t comma = s.find(", "); comma != std::string_view::npos) {
    std::string_view d = s.substr(0, comma);
    const auto n = take_number(d);
    d = trim(d);
    if (!n || *n < 0 || (d != "day" && d != "days")) return std::nullopt;
    days = *n;
    s = s.substr(comma + 2);
  }
  const auto hms = clock_time(s);
  if (!hms) return std::nullopt;
  return days * 86400 + *hms;
}

double number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : kUnknown;
}

bool llamafactory_line(std::string_view t) {
  return starts_with(t, "{") && contains(t, "\"current_steps\"") && contains(t, "\"elapsed_time\"");
}

/// One process writing the file: its last step and its clock then.
struct Writer {
  std::int64_t step;
  double elapsed;
};

class LlamaFactoryParser : public LineParser {
 public:
  explicit LlamaFactoryParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    const std::string_view t = trim(raw);
    if (!llamafactory_line(t)) return;
    const auto j = nlohmann::json::parse(t, nullptr, false);
    const double step = j.is_object() ? detail::number(j, "current_steps") : kUnknown;
    const auto elapsed =
        j.is_object() && j.contains("elapsed_time") && j["elapsed_time"].is_string()
            ? timedelta_seconds(j["elapsed_time"].get<std::string>())
            : std::nullopt;
    if (!known(step) || step < 0 || !elapsed) {
      out_.malformed(number,
                     "a trainer_log.jsonl line without current_steps or a readable "
                     "elapsed_time (H:MM:SS)");
      return;
    }
    if (const double total = detail::number(j, "total_steps"); known(total) && total > 0)
      out_.meta("train_iters", total, number, false);
    const double loss = detail::number(j, "loss");
    if (known(loss)) {
      record(j, as_step(step), *elapsed, loss, number);
    } else if (known(detail::number(j, "eval_loss")) || known(detail::number(j, "predict_loss"))) {
      evaluation(as_step(step), *elapsed, number);
    }
  }

  void finish() override {
    if (repeated_ > 0)
      out_.warn(first_repeat_,
                fmt::format("{} lines repeat a step already logged: {} processes wrote this "
                            "file, each with its own clock; each step is read once, timed by "
                            "the process that logged it first",
                            repeated_, most_writers_));
  }

 private:
  void record(const nlohmann::json& j, std::int64_t step, double elapsed, double loss,
              std::uint64_t number) {
    const std::optional<Writer> before = advance_writer(step, elapsed);
    if (kept_.count(step)) {
      if (repeated_++ == 0) first_repeat_ = number;
      return;  // a step another process logged first
    }
    Iteration it;
    it.step = step;
    it.line = static_cast<std::uint32_t>(number);
    it.loss = loss;
    out_.field("loss");
    if (before) {
      it.count = static_cast<std::uint32_t>(std::min<std::int64_t>(step - before->step, 1 << 30));
      // A second's resolution: a record as short as its clock is not timed.
      if (elapsed > before->elapsed) {
        it.time_s = (elapsed - before->elapsed) / it.count;
        out_.field("time");
      }
    }
    if (const double tokens = detail::number(j, "total_tokens"); known(tokens)) {
      if (known(last_tokens_) && tokens >= last_tokens_ && it.count > 0) {
        it.tokens = (tokens - last_tokens_) / it.count;
        out_.field("tokens");
      }
      last_tokens_ = tokens;
    }
    out_.add(it);
    kept_.insert(step);
    max_step_ = std::max(max_step_, step);
  }

  /// The process that wrote this line: the one whose last step is the nearest below this one
  /// with a clock not ahead of it. Returns where that process was before (none for a process
  /// seen first, or the first line after a restart) and moves it on.
  std::optional<Writer> advance_writer(std::int64_t step, double elapsed) {
    if (!writers_.empty() && step <= max_step_) {
      double earliest = writers_.front().elapsed;
      for (const auto& w : writers_) earliest = std::min(earliest, w.elapsed);
      if (elapsed + 60 < earliest) new_segment();  // a clock that starts again: a resumed job
    }
    Writer* from = nullptr;
    for (auto& w : writers_)
      if (w.step < step && w.elapsed <= elapsed + 1 && (!from || w.step > from->step)) from = &w;
    if (!from) {
      if (writers_.size() < 8) writers_.push_back({step, elapsed});
      most_writers_ = std::max(most_writers_, writers_.size());
      // elapsed_time counts from the start of training (on_train_begin), at step 0; after a
      // resume, from a checkpoint step the file does not say.
      if (!resumed_ && step > 0) return Writer{0, 0.0};
      return std::nullopt;
    }
    const Writer before = *from;
    *from = {step, elapsed};
    return before;
  }

  void new_segment() {
    resumed_ = true;
    writers_.clear();
    kept_.clear();
    last_eval_step_ = -1;
  }

  /// An evaluation at `step`: the time since that process logged the step is the evaluation's.
  void evaluation(std::int64_t step, double elapsed, std::uint64_t number) {
    Writer* w = nullptr;
    for (auto& c : writers_)
      if (c.step == step && c.elapsed <= elapsed + 1) w = &c;
    if (!w) return;
    const double duration = std::max(0.0, elapsed - w->elapsed);
    w->elapsed = elapsed;
    if (step == last_eval_step_) return;  // a second process's copy
    last_eval_step_ = step;
    Event e;
    e.kind = EventKind::kEval;
    e.step = step;
    e.line = static_cast<std::uint32_t>(number);
    e.detail = "eval_loss line";
    e.duration_s = duration;
    out_.add_event(e);
  }

  RunBuilder& out_;
  std::vector<Writer> writers_;            // of the current job (since the last restart)
  std::unordered_set<std::int64_t> kept_;  // steps of the current job (writers drift apart)
  std::size_t most_writers_ = 0, repeated_ = 0;
  bool resumed_ = false;
  std::int64_t max_step_ = -1, last_eval_step_ = -1;
  double last_tokens_ = kUnknown;
  std::uint64_t first_repeat_ = 0;
};

double sniff_llamafactory(std::string_view head, std::string_view) {
  return score_lines(head, [](std::string_view t) { return llamafactory_line(t) ? 3.0 : 0.0; });
}

}  // namespace

const FormatSpec& llamafactory_format() {
  static const FormatSpec spec{"llamafactory",
                               "LLaMA-Factory trainer_log.jsonl (current_steps, elapsed_time)",
                               sniff_llamafactory,
                               make_line_parser<LlamaFactoryParser>,
                               nullptr,
                               nullptr,
                               0,
                               TimingKind::kAveraged};
  return spec;
}

}  // namespace mfu::detail
