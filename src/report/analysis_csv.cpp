// One CSV row per log record. A record is one iteration or, where the log prints one line per
// logging interval (Megatron, Hugging Face's logging_steps), the `iterations` it covers: the
// row's time, tokens, model FLOPs and phase times are the whole record's (per iteration times
// `iterations`), its MFU and loss are the record's own. `step` is the last step it covers.
#include <fmt/format.h>

#include "report/analysis_common.hpp"
#include "report/json_numbers.hpp"

namespace mfu::detail {
namespace {

std::string csv_cell(double v) {
  return known(v) ? fmt::format("{}", v) : std::string();
}

}  // namespace

void render_analysis_csv(const Analysis& a, const Run& run, std::ostream& out) {
  std::vector<Phase> phases;
  for (std::size_t p = 0; p < kPhaseCount; ++p) {
    for (std::size_t i = 0; i < run.iterations.size(); ++i) {
      if (known(run.iterations[i].phase[p])) {
        phases.push_back(static_cast<Phase>(p));
        break;
      }
    }
  }
  out << "step,iterations,time_s,mfu,tokens,model_flops,loss,stall";
  for (Phase p : phases) out << ',' << phase_key(p);
  out << '\n';
  for (std::size_t i = 0; i < run.iterations.size(); ++i) {
    const Iteration it = run.iterations[i];
    const double n = static_cast<double>(it.count);
    const bool stall = i < a.record_flags.size() && (a.record_flags[i] & kRecordStall);
    out << fmt::format("{},{},{},{},{},{},{},{}", it.step, it.count, csv_cell(it.time_s * n),
                       csv_cell(iteration_mfu(a, it)), csv_cell(iteration_tokens(a, it) * n),
                       csv_cell(iteration_model_flops(a, it) * n), csv_cell(float_digits(it.loss)),
                       stall ? 1 : 0);
    for (Phase p : phases) out << ',' << csv_cell(it.at(p) * n);
    out << '\n';
  }
}

}  // namespace mfu::detail
