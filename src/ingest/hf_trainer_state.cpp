// Hugging Face Trainer's JSON files: trainer_state.json (log_history with loss entries, eval
// entries with eval_runtime, total_flos) and all_results.json / train_results.json
// (train_runtime, train_samples_per_second, ...). Neither times single steps; the run becomes
// one record averaged over its steps, with the evaluation passes as events.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ingest/parser.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

double num(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return kUnknown;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    auto d = parse_double(it->get<std::string>());
    return d ? *d : kUnknown;
  }
  return kUnknown;
}

/// trainer_state.json holds no train_runtime; HF writes it to all_results.json next to the
/// output directory (or train_results.json). Read it when it sits beside this file.
void merge_sibling_results(nlohmann::json& j, const std::string& path, RunBuilder& out) {
  namespace fs = std::filesystem;
  if (j.contains("train_runtime") || path.empty() || path == "-") return;
  const fs::path p(path);
  const std::string name = p.filename().string();
  const std::size_t k = name.find("trainer_state");
  if (k == std::string::npos) return;
  const std::string prefix = name.substr(0, k);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  for (const fs::path& c :
       {dir / (prefix + "all_results.json"), dir / (prefix + "train_results.json"),
        dir.parent_path() / "all_results.json", dir.parent_path() / "train_results.json"}) {
    std::error_code ec;
    if (c.empty() || !fs::is_regular_file(c, ec)) continue;
    std::ifstream in(c);
    nlohmann::json r = nlohmann::json::parse(in, nullptr, false);
    if (r.is_discarded() || !r.is_object()) continue;
    for (auto& [key, value] : r.items())
      if (!j.contains(key)) j[key] = value;
    out.meta("results_file", c.string(), 0);
    out.info(0, fmt::format("train_runtime read from {}", c.string()));
    return;
  }
}

void parse(std::string_view text, RunBuilder& out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    out.malformed(1, "not a valid JSON object (trainer_state.json / all_results.json)");
    return;
  }
  merge_sibling_results(j, out.label(), out);
  double runtime = num(j, "train_runtime");
  double samples_per_s = num(j, "train_samples_per_second");
  double steps_per_s = num(j, "train_steps_per_second");
  double steps = num(j, "global_step");
  double max_steps = num(j, "max_steps");
  double total_flos = num(j, "total_flos");
  double eval_total = 0;
  std::size_t evals = 0;
  double last_loss = kUnknown;
  if (auto lh = j.find("log_history"); lh != j.end() && lh->is_array()) {
    for (const auto& e : *lh) {
      if (!e.is_object()) continue;
      if (double er = num(e, "eval_runtime"); known(er)) {
        Event ev;
        ev.kind = EventKind::kEval;
        ev.duration_s = er;
        ev.step = as_step(known(num(e, "step")) ? num(e, "step") : 0.0);
        ev.detail = "evaluation";
        out.add_event(ev);
        eval_total += er;
        ++evals;
      }
      if (double pr = num(e, "predict_runtime"); known(pr)) {
        // trainer.predict() after training: time of the job, not inside train_runtime.
        Event ev;
        ev.kind = EventKind::kEval;
        ev.duration_s = pr;
        ev.step = as_step(known(num(e, "step")) ? num(e, "step") : 0.0);
        ev.detail = "prediction pass (predict_runtime)";
        out.add_event(ev);
      }
      if (double rt = num(e, "train_runtime"); known(rt)) {
        runtime = rt;
        if (double v = num(e, "train_samples_per_second"); known(v)) samples_per_s = v;
        if (double v = num(e, "train_steps_per_second"); known(v)) steps_per_s = v;
        if (double v = num(e, "total_flos"); known(v)) total_flos = v;
      }
      if (double l = num(e, "loss"); known(l)) last_loss = l;
      if (double s = num(e, "step"); known(s)) steps = std::max(known(steps) ? steps : 0.0, s);
    }
  }
  if (known(total_flos)) out.meta("framework_total_flops", total_flos, 1);
  if (known(max_steps)) out.meta("train_iters", max_steps, 1);
  if (auto bs = num(j, "train_batch_size"); known(bs)) out.meta("micro_batch", bs, 1);
  if (!known(runtime)) {
    out.info(1,
             "no train_runtime in this file: pass all_results.json (or train_results.json) with it "
             "for timing");
    return;
  }
  if (!known(steps) && known(steps_per_s)) {
    steps = std::round(steps_per_s * runtime);
    // The Trainer rounds train_steps_per_second to 3 decimals: 0.003 is 0.0025 to 0.0035.
    const double uncertainty = 0.0005 / steps_per_s;
    if (uncertainty > 0.01)
      out.warn(1, fmt::format("the step count ({}) comes from train_steps_per_second = {} x "
                              "train_runtime, and that rate is rounded to 3 decimals: the count "
                              "and the time per step are uncertain by {:.0f}% (the wall time is "
                              "not); trainer_state.json beside it gives the exact count",
                              steps, steps_per_s, 100 * uncertainty));
  }
  if (!known(steps) || steps <= 0) {
    out.warn(1,
             "train_runtime is given but the number of steps is not; no step time can be derived");
    return;
  }
  Iteration agg;
  agg.step = as_step(steps);
  agg.count = static_cast<std::uint32_t>(as_count(steps, 1 << 30, 1));
  agg.line = 1;
  // train_runtime includes the evaluation passes run during training.
  agg.time_s = std::max(0.0, runtime - eval_total) / steps;
  if (known(samples_per_s)) agg.samples = samples_per_s * runtime / steps;
  agg.loss = known(last_loss) ? last_loss : num(j, "train_loss");
  out.add(agg);
  if (double er = num(j, "eval_runtime"); known(er) && evals == 0) {
    out.info(
        1, fmt::format(
               "eval_runtime {} s is one final evaluation pass, not counted in train_runtime", er));
  }
  out.info(1,
           fmt::format(
               "no per-step times: the run is one record of {} steps averaged from train_runtime{}",
               agg.step, eval_total > 0 ? " minus the evaluation passes" : ""));
}

double sniff_hf_trainer_state(std::string_view head, std::string_view filename) {
  std::string_view t = trim(head.substr(0, 64));
  if (t.empty() || t.front() != '{') return 0;
  double score = 0;
  if (contains(head, "\"log_history\"")) score += 6;
  if (contains(head, "\"train_runtime\"")) score += 4;
  if (contains(head, "\"train_samples_per_second\"")) score += 2;
  if (contains(filename, "trainer_state") || contains(filename, "all_results") ||
      contains(filename, "train_results"))
    score += 1;
  // A JSON Lines file with many records is the line format, not this document.
  std::size_t lines = 0;
  for (char c : head.substr(0, 20000))
    if (c == '\n') ++lines;
  if (lines > 3 && contains(head.substr(0, head.find('\n')), "}")) score = 0;
  return score;
}

}  // namespace

const FormatSpec& hf_trainer_state_format() {
  static const FormatSpec spec{"hf-trainer-state",
                               "Hugging Face trainer_state.json / all_results.json",
                               sniff_hf_trainer_state,
                               nullptr,
                               parse,
                               nullptr,
                               std::size_t{256} << 20,
                               TimingKind::kAveraged};
  return spec;
}

}  // namespace mfu::detail
