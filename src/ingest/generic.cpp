// The generic reader: step lines of a framework no parser knows, read field by field through
// the table of step_fields.cpp ("step 00000001/00000015 | step-time 73.352 sec | ... |
// tokens-per-second 28,590"). Chosen only when at least three consecutive lines of the head
// agree on the fields that count the step and time it, and never over a format that knows the
// lines (its evidence is kept below theirs). The fields it used are named (inspect shows them),
// and so are the lines with the step counter that did not fit.
// What a record covers: the step printed, timed by its own time field (one step, or a mean
// that the log prints per step), or by the growth of an elapsed clock over the steps between
// lines, or by the lines' timestamps.
#include <fmt/format.h>

#include <vector>

#include "ingest/parser.hpp"
#include "ingest/step_fields.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// The fields that identify a format: its step counter and what times it.
std::string core(const StepFields& f) {
  const auto& t = f.time_s                 ? f.time_s
                  : f.elapsed_s            ? f.elapsed_s
                  : f.tokens_per_s         ? f.tokens_per_s
                  : f.tokens_per_s_per_gpu ? f.tokens_per_s_per_gpu
                  : f.samples_per_s        ? f.samples_per_s
                                           : f.tflops_per_gpu;
  return fmt::format("{}|{}", f.step ? f.step->name : "", t ? t->name : "");
}

class GenericParser : public LineParser {
 public:
  explicit GenericParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    const std::string_view t = trim(raw);
    const StepFields f = read_step_fields(t);
    if (!f.step) return;
    if (!f.fits() || (!core_.empty() && core(f) != core_)) {
      if (misfits_++ < 5) misfit_lines_.push_back(number);
      return;
    }
    if (core_.empty()) {
      core_ = core(f);
      out_.meta("generic_fields", f.signature(), number, false);
    }
    record(f, number);
  }

  void finish() override {
    if (!core_.empty())
      out_.info(0, fmt::format("read as generic step lines with the fields {}{}",
                               out_.run.meta.text("generic_fields").value_or(""), misfit_note()));
  }

 private:
  void record(const StepFields& f, std::uint64_t number) {
    Iteration it;
    it.step = as_step(f.step->value);
    it.line = static_cast<std::uint32_t>(number);
    const double since = f.step->value - last_step_;
    if (f.time_s && f.time_s->value > 0) {
      it.time_s = f.time_s->value;
    } else if (f.elapsed_s && since > 0 && f.elapsed_s->value > last_elapsed_) {
      it.time_s = (f.elapsed_s->value - last_elapsed_) / since;
      it.count = static_cast<std::uint32_t>(std::min(since, 1e9));
    }
    if (f.elapsed_s) last_elapsed_ = f.elapsed_s->value;
    last_step_ = f.step->value;
    if (known(it.time_s)) {
      out_.field("time");
      if (f.tokens_per_s) {
        it.tokens = f.tokens_per_s->value * it.time_s;
      } else if (f.tokens_per_s_per_gpu) {
        // One GPU's tokens: the analysis scales them by the GPU count, or works per GPU.
        it.tokens = f.tokens_per_s_per_gpu->value * it.time_s;
        out_.meta("tokens_scope", "gpu", number, false);
      }
      if (f.samples_per_s) it.samples = f.samples_per_s->value * it.time_s;
    }
    if (f.tflops_per_gpu) {
      it.reported_flops_per_gpu = f.tflops_per_gpu->value * 1e12;
      out_.meta("framework_flops_by", "generic", number, false);
    }
    if (f.mfu) it.reported_mfu = f.mfu->value;
    if (f.loss) {
      it.loss = f.loss->value;
      out_.field("loss");
    }
    out_.add(it);
  }

  std::string misfit_note() const {
    if (misfits_ == 0) return "";
    std::vector<std::string> at;
    for (auto l : misfit_lines_) at.push_back(std::to_string(l));
    return fmt::format("; {} line(s) with a step counter did not fit them (lines {}{})", misfits_,
                       fmt::join(at, ", "), misfits_ > at.size() ? ", ..." : "");
  }

  RunBuilder& out_;
  std::string core_;
  double last_step_ = 0, last_elapsed_ = 0;
  std::size_t misfits_ = 0;
  std::vector<std::uint64_t> misfit_lines_;
};

/// Evidence: 2 when at least three consecutive lines of the head fit with the same fields
/// (other lines between them allowed), else nothing. Formats that know their lines score more.
double sniff_generic(std::string_view head, std::string_view) {
  std::string last;
  int run = 0, best = 0, lines = 0;
  std::size_t pos = 0;
  while (pos < head.size() && lines < 2000 && best < 3) {
    std::size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) nl = head.size();
    const StepFields f = read_step_fields(trim(head.substr(pos, nl - pos)));
    pos = nl + 1;
    ++lines;
    if (!f.fits()) continue;
    const std::string c = core(f);
    run = c == last ? run + 1 : 1;
    last = c;
    best = std::max(best, run);
  }
  return best >= 3 ? 2.0 : 0.0;
}

}  // namespace

const FormatSpec& generic_format() {
  static const FormatSpec spec{"generic",
                               "step lines of any framework: a step counter with a time or "
                               "throughput field, matched by name and unit",
                               sniff_generic,
                               make_line_parser<GenericParser>,
                               nullptr,
                               nullptr,
                               0,
                               TimingKind::kSampled};
  return spec;
}

}  // namespace mfu::detail
