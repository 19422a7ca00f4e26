// One CSV row per record: step, iterations, time, MFU, tokens, FLOPs, loss, phase timers.
#include <fmt/format.h>

#include "report/analysis_common.hpp"
#include "report/json_numbers.hpp"

namespace mfu::detail {
namespace {

std::string cell(double v) {
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
    const bool stall = i < a.record_flags.size() && (a.record_flags[i] & kRecordStall);
    out << fmt::format("{},{},{},{},{},{},{},{}", it.step, it.count, cell(it.time_s),
                       cell(iteration_mfu(a, it)), cell(iteration_tokens(a, it)),
                       cell(iteration_model_flops(a, it)), cell(float_digits(it.loss)),
                       stall ? 1 : 0);
    for (Phase p : phases) out << ',' << cell(it.at(p));
    out << '\n';
  }
}

}  // namespace mfu::detail
