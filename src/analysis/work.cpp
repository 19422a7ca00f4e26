// Stage 2: where a record's model FLOPs come from (the log's own field, the model times the
// tokens, a flag, or the framework's printed FLOP/s), and what a record missing them gets.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/parallel.hpp"
#include "analysis/stages.hpp"
#include "mfu/inputs.hpp"

namespace mfu::detail {
namespace {

/// Model FLOPs per iteration straight from the record, before any fill-in.
double own_flops(const WorkPlan& w, const Iteration& it, double t) {
  switch (w.source) {
    case WorkSource::kLog: return it.model_flops;
    case WorkSource::kModel: {
      const double tok = w.tokens(it);
      return known(tok) ? w.fpt_model * tok : kUnknown;
    }
    case WorkSource::kFlag:
    case WorkSource::kFrameworkTotal: return w.flops_default;
    case WorkSource::kFramework:
      return known(it.reported_flops_per_gpu) && known(t) ? it.reported_flops_per_gpu * t * w.gpus
                                                          : kUnknown;
    case WorkSource::kNone: return kUnknown;
  }
  return kUnknown;
}

bool log_counts_flops(const Run& run) {
  // (Without the column no record need be looked at: each look finds the record's segment.)
  if (!run.iterations.may_hold(RecordFields::kModelFlops)) return false;
  for (std::size_t i = 0; i < run.iterations.size(); ++i)
    if (valid_positive(run.iterations.model_flops(i))) return true;
  return false;
}

/// The framework's own count is used only when it is possible on this hardware.
bool framework_count_usable(const Run& run, const Resolved& r, const Records& rec) {
  double sum = 0, tsum = 0;
  for_each_validated(
      run.iterations,
      [&](std::size_t i, const Iteration& it) {
        if (std::isnan(rec.time[i]) || !known(it.reported_flops_per_gpu)) return;
        sum += it.reported_flops_per_gpu * rec.time[i] * rec.count(i);
        tsum += rec.time[i] * rec.count(i);
      },
      RecordFields::kWork);
  return tsum > 0 && (!known(r.peak) || sum / tsum <= r.peak);
}

WorkSource choose_source(const Run& run, const Resolved& r, const Records& rec, const WorkPlan& w) {
  struct Seen {
    bool log_flops = false, reported = false, tokens = false;
  };
  // A part stops looking once what it could still find is found: a field no record was
  // given is never found (on a log with tokens and no FLOPs, one block is read, not every
  // record).
  const IterationTable& T = run.iterations;
  const bool may_log_flops = T.may_hold(RecordFields::kModelFlops);
  const bool may_report = T.may_hold(RecordFields::kReportedFlops);
  const auto found_all = [&](const Seen& s) {
    return (s.log_flops || !may_log_flops) && (s.reported || !may_report) && s.tokens;
  };
  const Parts parts = parts_of(T.size(), rec.threads);
  std::vector<Seen> seen(parts.size());
  run_parts(parts, [&](std::size_t p, std::size_t lo, std::size_t hi) {
    Seen s;  // on this thread's stack until the part is done (run_parts)
    for (std::size_t from = lo; from < hi && !found_all(s); from += 16 * kRecordBlock) {
      for_each_validated_in(
          T, from, std::min(hi, from + 16 * kRecordBlock),
          [&](std::size_t, const Iteration& it) {
            s.log_flops = s.log_flops || known(it.model_flops);
            s.reported = s.reported || known(it.reported_flops_per_gpu);
            s.tokens = s.tokens || known(w.tokens(it));
          },
          RecordFields::kWork);
    }
    seen[p] = s;
  });
  bool any_log_flops = false, any_reported = false, any_tokens = known(r.tokens_default);
  for (const Seen& s : seen) {
    any_log_flops = any_log_flops || s.log_flops;
    any_reported = any_reported || s.reported;
    any_tokens = any_tokens || s.tokens;
  }
  // The user's FLOPs per step win over the log's own count, as every flag does.
  if (known(r.flops_default)) return WorkSource::kFlag;
  if (any_log_flops) return WorkSource::kLog;
  if (r.fpt && any_tokens) return WorkSource::kModel;
  if (any_reported && known(r.work_gpus) && framework_count_usable(run, r, rec))
    return WorkSource::kFramework;
  if (run.meta.number("framework_total_flops") && known(r.gpus)) return WorkSource::kFrameworkTotal;
  return WorkSource::kNone;
}

/// Median FLOPs per iteration for each tokens-per-iteration value among records printing
/// both: a record without FLOPs but with the same tokens has the same configuration.
std::map<double, double> flops_by_tokens(const Run& run, const Records& rec, const WorkPlan& w) {
  constexpr std::size_t kMaxKeys = 64, kMaxValues = 257;
  std::map<double, std::vector<double>> values;
  for_each_validated(
      run.iterations,
      [&](std::size_t i, const Iteration& it) {
        const double tok = w.tokens(it), f = own_flops(w, it, rec.time[i]);
        if (!known(tok) || !known(f)) return;
        auto found = values.find(tok);
        if (found == values.end()) {
          if (values.size() >= kMaxKeys) return;
          found = values.emplace(tok, std::vector<double>{}).first;
        }
        if (found->second.size() < kMaxValues) found->second.push_back(f);
      },
      RecordFields::kWork);
  std::map<double, double> out;
  for (auto& [tok, v] : values) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    out[tok] = v[v.size() / 2];
  }
  return out;
}

}  // namespace

double WorkPlan::tokens(const Iteration& it) const {
  return tokens_of(it, seq_len, tokens_default, tokens_scale);
}

double WorkPlan::flops(const Iteration& it, double t, bool* filled) const {
  const double f = own_flops(*this, it, t);
  if (known(f) || flops_by_tokens.empty()) return f;
  const double tok = tokens(it);
  if (!known(tok)) return kUnknown;
  auto found = flops_by_tokens.find(tok);
  if (found == flops_by_tokens.end()) return kUnknown;
  if (filled) *filled = true;
  return found->second;
}

const char* WorkPlan::source_name() const {
  switch (source) {
    case WorkSource::kLog: return "log";
    case WorkSource::kModel: return "model";
    case WorkSource::kFlag: return "flag";
    case WorkSource::kFramework:
    case WorkSource::kFrameworkTotal: return "framework";
    case WorkSource::kNone: return "";
  }
  return "";
}

WorkPlan work_plan_of(const Analysis& a) {
  WorkPlan w;
  w.seq_len = a.seq_len;
  w.tokens_default = a.default_tokens_per_iteration;
  w.flops_default = a.default_flops_per_iteration;
  w.gpus = a.per_gpu ? 1.0 : a.gpus;
  w.tokens_scale = a.record_tokens_scale;
  w.fpt_model = a.model_flops_per_token;
  w.fpt_hardware = a.hardware_flops_per_token;
  if (a.flops_from_log)
    w.source = WorkSource::kLog;
  else if (a.flops_from_framework)
    w.source = WorkSource::kFramework;
  else if (a.flops_source == "model")
    w.source = WorkSource::kModel;
  else if (a.flops_source == "flag")
    w.source = WorkSource::kFlag;
  else if (a.flops_source == "framework")
    w.source = WorkSource::kFrameworkTotal;
  return w;
}

WorkPlan plan_work(const Run& run, const Resolved& r, const Records& rec, Analysis& a) {
  WorkPlan w = work_plan_of(a);  // a holds the resolved inputs; its source is not chosen yet
  w.source = choose_source(run, r, rec, w);
  if (w.source == WorkSource::kFrameworkTotal) {
    std::uint64_t iters = 0;
    for (std::size_t i = 0; i < rec.time.size(); ++i) iters += rec.count(i);
    w.flops_default = *run.meta.number("framework_total_flops") / static_cast<double>(iters);
    a.warnings.push_back(
        "model FLOPs are the framework's total_flos (Hugging Face's 6 x params x tokens "
        "estimate); give the model for mfu's own count");
  }
  if (w.source == WorkSource::kFlag && log_counts_flops(run))
    a.warnings.push_back(fmt::format(
        "the log prints its own model FLOPs per step; {} replaces them (drop it to use the log's)",
        input_phrase(Input::kFlopsPerStep)));
  if (w.source == WorkSource::kLog || w.source == WorkSource::kFramework)
    w.flops_by_tokens = flops_by_tokens(run, rec, w);
  if (w.source == WorkSource::kNone)
    a.unknowns.push_back(
        r.model ? fmt::format("tokens per step: give {}, or {} with {}",
                              input_phrase(Input::kTokensPerStep), input_phrase(Input::kBatch),
                              input_phrase(Input::kSeqLen))
                : fmt::format("model FLOPs: give {} (or {}), or {}", input_phrase(Input::kModel),
                              input_phrase(Input::kShape), input_phrase(Input::kFlopsPerStep)));
  a.flops_source = w.source_name();
  a.flops_from_log = w.source == WorkSource::kLog;
  a.flops_from_framework = w.source == WorkSource::kFramework;
  if (w.source == WorkSource::kFrameworkTotal) a.default_flops_per_iteration = w.flops_default;
  return w;
}

}  // namespace mfu::detail
