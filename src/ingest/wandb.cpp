// Weights & Biases run files (wandb/run-*/files/):
//   wandb-history.jsonl, one object per wandb.log() call: the user's keys beside W&B's own
//     "_step" (the call's number), "_runtime" (seconds since wandb.init) and "_timestamp";
//   wandb-summary.json, the last value of every key, with the same "_runtime".
// What a record covers: the training steps since the previous line, by the user's own step key
// (iter, step, global_step, trainer/global_step; W&B's _step counts calls, not steps, and is
// the step only when no such key exists), timed by the growth of _runtime. A summary is one
// record of the whole run: _runtime over its step count (start-up and evaluations included).
// output.log, the console W&B captured, is read as its framework's own format.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ingest/parser.hpp"
#include "ingest/step_fields.hpp"
#include "ingest/text_scan.hpp"
#include "ingest/wandb_rows.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

double number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : kUnknown;
}

/// The user's training step, in the keys frameworks log it under.
double user_step(const nlohmann::json& j) {
  for (const char* k : {"iter", "step", "global_step", "trainer/global_step", "train/global_step"})
    if (const double v = number(j, k); known(v) && v >= 0) return v;
  return kUnknown;
}

double loss_of(const nlohmann::json& j) {
  for (const char* k : {"train/loss", "loss", "train_loss", "train/lm_loss"})
    if (const double v = number(j, k); known(v)) return v;
  return kUnknown;
}

bool wandb_object(std::string_view t) {
  return starts_with(t, "{") && contains(t, "\"_runtime\"") &&
         (contains(t, "\"_step\"") || contains(t, "\"_timestamp\""));
}

class HistoryParser : public LineParser {
 public:
  explicit HistoryParser(RunBuilder& out) : out_(out), rows_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    const std::string_view t = trim(raw);
    if (!wandb_object(t)) return;
    const auto j = nlohmann::json::parse(t, nullptr, false);
    if (!j.is_object()) {
      out_.malformed(number, "a wandb-history.jsonl line that is not a JSON object");
      return;
    }
    rows_.row(j, number);
  }

 private:
  RunBuilder& out_;
  WandbRows rows_;
};

/// A per-step time or throughput the row logs under a name of the generic table ("perf/
/// step_time", "train/tokens_per_second"): the keys' last path segments read as a step line.
StepFields logged_rates(const nlohmann::json& j) {
  std::string line;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_number() || starts_with(key, "_")) continue;
    const std::size_t slash = key.rfind('/');
    line +=
        fmt::format("{}{}: {}", line.empty() ? "" : " | ",
                    slash == std::string::npos ? key : key.substr(slash + 1), value.get<double>());
  }
  return read_step_fields(line);
}

void parse_summary(std::string_view text, RunBuilder& out) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) {
    out.malformed(1, "wandb-summary.json is not a JSON object");
    return;
  }
  const double runtime = number(j, "_runtime");
  const double step = user_step(j);
  if (const double ts = number(j, "_timestamp"); known(ts)) {
    out.timestamp(ts);
    if (known(runtime)) out.timestamp(ts - runtime);
  }
  if (!known(runtime) || !known(step) || !(step > 0)) {
    out.warn(1,
             "a W&B summary holds the last value of each key: without _runtime and a step "
             "counter (iter, step, global_step) it gives no step time; wandb-history.jsonl "
             "of the same run does");
    return;
  }
  Iteration it;
  it.step = as_step(step);
  it.count = static_cast<std::uint32_t>(std::min(step, 1e9));
  it.line = 1;
  it.time_s = runtime / step;
  it.loss = loss_of(j);
  out.add(it);
  out.info(1, fmt::format("a W&B summary: the run is one record of {} steps over _runtime {} s "
                          "(start-up and evaluations included)",
                          it.step, runtime));
}

double sniff_history(std::string_view head, std::string_view) {
  return score_lines(head, [](std::string_view t) { return wandb_object(t) ? 2.0 : 0.0; });
}

double sniff_summary(std::string_view head, std::string_view filename) {
  const std::string_view t = trim(head);
  if (!starts_with(t, "{") || !contains(t, "\"_runtime\"")) return 0;
  // One object: a history file has one per line.
  const bool one =
      t.find('\n') == std::string_view::npos || t.find("\n{") == std::string_view::npos;
  if (!one) return 0;
  return contains(filename, "wandb-summary") || contains(t, "\"_wandb\"") ? 6 : 2;
}

}  // namespace

void WandbRows::row(const nlohmann::json& j, std::uint64_t number) {
  double step = user_step(j);
  if (!known(step)) step = detail::number(j, "_step");
  const double runtime = detail::number(j, "_runtime");
  if (!known(step)) return;
  if (const double ts = detail::number(j, "_timestamp"); known(ts)) {
    out_.timestamp(ts);
    if (known(runtime) && last_logged_ < 0) out_.timestamp(ts - runtime);  // wandb.init()
  }
  Iteration it;
  it.step = as_step(step);
  it.line = static_cast<std::uint32_t>(number);
  it.loss = loss_of(j);
  if (known(it.loss)) out_.field("loss");
  const StepFields rates = logged_rates(j);
  if (known(runtime) && step > last_step_ && runtime > last_runtime_) {
    it.count = static_cast<std::uint32_t>(std::min(step - last_step_, 1e9));
    it.time_s = (runtime - last_runtime_) / (step - last_step_);
  } else if (!known(runtime) && rates.time_s && rates.time_s->value > 0) {
    it.time_s = rates.time_s->value;
  }
  if (known(it.time_s)) {
    out_.field("time");
    if (rates.tokens_per_s) it.tokens = rates.tokens_per_s->value * it.time_s;
    if (rates.samples_per_s) it.samples = rates.samples_per_s->value * it.time_s;
    if (known(it.tokens)) out_.field("tokens");
  }
  if (it.step == last_logged_ && out_.has_last()) return;  // several calls at one step
  if (!known(runtime) && !known(it.time_s) && !known(it.loss)) return;
  out_.add(it);
  last_logged_ = it.step;
  last_step_ = step;
  if (known(runtime)) last_runtime_ = runtime;
}

const FormatSpec& wandb_history_format() {
  static const FormatSpec spec{
      "wandb-history",
      "Weights & Biases wandb-history.jsonl (_step, _runtime and the user's keys)",
      sniff_history,
      make_line_parser<HistoryParser>,
      nullptr,
      nullptr,
      0,
      TimingKind::kAveraged};
  return spec;
}

const FormatSpec& wandb_summary_format() {
  static const FormatSpec spec{
      "wandb-summary",       "Weights & Biases wandb-summary.json (the run's last values)",
      sniff_summary,         nullptr,
      parse_summary,         nullptr,
      std::size_t{16} << 20, TimingKind::kAveraged};
  return spec;
}

}  // namespace mfu::detail
