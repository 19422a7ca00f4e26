// The decisions shared by the paths that combine per-rank streams (rank_stream_parts.hpp).
#include "ingest/rank_stream_parts.hpp"

namespace mfu::detail {
namespace {

bool same_value(double a, double b) {
  return (!known(a) && !known(b)) || a == b;
}

void fill(double& into, double from) {
  if (!known(into)) into = from;
}

void add_known(double& into, double from) {
  if (known(from)) into = known(into) ? into + from : from;
}

RestartMark at(std::uint16_t file, std::uint32_t line) {
  return {file, line, -1, std::nullopt};
}

bool before(const RestartMark& a, const RestartMark& b) {
  return std::pair{a.file, a.line} < std::pair{b.file, b.line};
}

}  // namespace

bool identical(const Iteration& a, const Iteration& b) {
  // Timer by timer: a timer neither line has is NaN in both (NaN != NaN made every pair of
  // lines without all ten timers, every log's, differ).
  for (std::size_t p = 0; p < kPhaseCount; ++p)
    if (!same_value(a.phase[p], b.phase[p])) return false;
  return a.count == b.count && same_value(a.time_s, b.time_s) &&
         same_value(a.timestamp_s, b.timestamp_s) && same_value(a.tokens, b.tokens) &&
         same_value(a.samples, b.samples) && same_value(a.loss, b.loss) &&
         same_value(a.model_flops, b.model_flops) &&
         same_value(a.reported_flops_per_gpu, b.reported_flops_per_gpu) &&
         same_value(a.reported_mfu, b.reported_mfu);
}

void fold_micro_batch(Iteration& step, const Iteration& micro) {
  add_known(step.time_s, micro.time_s);
  add_known(step.tokens, micro.tokens);
  add_known(step.samples, micro.samples);
  add_known(step.model_flops, micro.model_flops);
  for (std::size_t p = 0; p < kPhaseCount; ++p) add_known(step.phase[p], micro.phase[p]);
  if (known(micro.timestamp_s)) step.timestamp_s = micro.timestamp_s;
  if (known(micro.loss)) step.loss = micro.loss;  // the last micro-batch's loss
}

Iteration combine_ranks(const std::vector<const Iteration*>& members) {
  const Iteration* slowest = members.front();
  for (const Iteration* m : members)
    if (known(m->time_s) && (!known(slowest->time_s) || m->time_s > slowest->time_s)) slowest = m;
  Iteration out = *slowest;
  for (const Iteration* m : members) {
    if (m->rank != out.rank) out.rank = -1;  // a job record now: no one rank's
    fill(out.tokens, m->tokens);
    fill(out.samples, m->samples);
    fill(out.loss, m->loss);
    fill(out.model_flops, m->model_flops);
    fill(out.reported_flops_per_gpu, m->reported_flops_per_gpu);
    fill(out.reported_mfu, m->reported_mfu);
    if (known(m->timestamp_s) && (!known(out.timestamp_s) || m->timestamp_s > out.timestamp_s))
      out.timestamp_s = m->timestamp_s;
    if (m->file < out.file || (m->file == out.file && m->line < out.line)) {
      out.file = m->file;
      out.line = m->line;
    }
  }
  return out;
}

Repeat classify_repeat(const Iteration* r, std::size_t g, const RunMeta& meta) {
  auto accumulated = [&] {  // as many records as the stated accumulation steps
    const auto accum = meta.number("grad_accum");
    return accum && *accum > 1 && static_cast<std::size_t>(*accum) == g;
  };
  bool all_identical = true;
  for (std::size_t k = 1; k < g; ++k) all_identical = all_identical && identical(r[0], r[k]);
  // Micro-batches without a timestamp or a loss of their own can print alike; as many as the
  // stated accumulation steps are taken for them.
  if (all_identical)
    return accumulated() && !known(r[0].timestamp_s) ? Repeat::kMicroBatches : Repeat::kDuplicate;
  bool timed = known(r[0].timestamp_s);
  double later = 0;
  for (std::size_t k = 1; k < g; ++k) {
    timed = timed && known(r[k].timestamp_s) && known(r[k].time_s);
    if (known(r[k].time_s)) later += r[k].time_s;
  }
  if (timed && later > 0) {
    const double elapsed = r[g - 1].timestamp_s - r[0].timestamp_s;
    return elapsed >= 0.75 * later ? Repeat::kMicroBatches : Repeat::kRanks;
  }
  return accumulated() ? Repeat::kMicroBatches : Repeat::kRanks;
}

RestartMarks::RestartMarks(std::vector<RestartMark> marks) {
  for (const RestartMark& m : marks) {
    if (m.record)
      records_.push_back(*m.record);
    else
      marks_.push_back(m);
  }
  std::sort(marks_.begin(), marks_.end(), before);
  std::sort(records_.begin(), records_.end());
}

bool RestartMarks::starts_incarnation(std::size_t i, const Iteration& it) {
  const bool at_line = after_previous_line(it);  // first: it moves the rank's last line
  return at_line || std::binary_search(records_.begin(), records_.end(), i);
}

bool RestartMarks::after_previous_line(const Iteration& it) {
  if (marks_.empty()) return false;
  const auto [prev, first] = last_line_.try_emplace({it.file, it.rank}, it.line);
  const std::uint32_t after = prev->second;
  prev->second = it.line;
  auto m = first ? std::lower_bound(marks_.begin(), marks_.end(), at(it.file, 0), before)
                 : std::upper_bound(marks_.begin(), marks_.end(), at(it.file, after), before);
  for (; m != marks_.end() && m->file == it.file && m->line <= it.line; ++m)
    if (m->rank < 0 || m->rank == it.rank) return true;
  return false;
}

StreamSummary::StreamSummary(std::int32_t rank, std::size_t records, std::size_t restarts) {
  r_.rank = rank;
  r_.records = records;
  r_.restarts = restarts;
}

void StreamSummary::add(const Iteration& it) {
  if (known(it.time_s)) {
    time_ += it.time_s;
    ++timed_;
  }
  if (known(it.at(Phase::kData))) {
    data_ += it.at(Phase::kData);
    ++waited_;
  }
  if (known(it.timestamp_s)) {
    if (!known(r_.first_timestamp_s) || it.timestamp_s < r_.first_timestamp_s)
      r_.first_timestamp_s = it.timestamp_s;
    if (!known(r_.last_timestamp_s) || it.timestamp_s > r_.last_timestamp_s)
      r_.last_timestamp_s = it.timestamp_s;
  }
}

RankStream StreamSummary::done() {
  if (timed_ > 0) r_.mean_time_s = time_ / static_cast<double>(timed_);
  if (waited_ > 0) r_.mean_data_s = data_ / static_cast<double>(waited_);
  return r_;
}

}  // namespace mfu::detail
