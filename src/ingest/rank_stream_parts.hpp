#pragma once
// The decisions of combining per-rank streams (rank_streams.hpp), shared by its paths: the
// reference path that copies every stream out, the one-stream path that sorts within the
// table, and the path that keeps streams as indices into the table. Each path must decide
// alike, so each decision lives here once.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "ingest/rank_streams.hpp"
#include "mfu/run.hpp"

namespace mfu::detail {

/// The same measurement printed twice (a line repeated, two loggers): every value alike, the
/// timestamp included (only its place differs). Not new work.
[[nodiscard]] bool identical(const Iteration& a, const Iteration& b);

/// Folds a later micro-batch record of the same step into `step`: work and time add up.
void fold_micro_batch(Iteration& step, const Iteration& micro);

/// Combines the records of one step printed by several ranks into the slowest one's.
[[nodiscard]] Iteration combine_ranks(const std::vector<const Iteration*>& members);

enum class Repeat { kDuplicate, kMicroBatches, kRanks };

/// What `g` consecutive records of one step in one stream are. Micro-batches need evidence:
/// timestamps that advance by the records' own times (each line printed after its micro-batch
/// ran), or as many records as the stated gradient-accumulation steps. Without it, repeats
/// are one step reported several times (two loggers, or untagged ranks) and are combined as
/// ranks are: the slowest, most complete record stands.
[[nodiscard]] Repeat classify_repeat(const Iteration* r, std::size_t g, const RunMeta& meta);

/// The logging interval of a stream of `n` steps (step(i) the i-th): the median step advance
/// between its records.
///
/// The rises are counted by size: a log has a few distinct ones (its logging interval, the odd
/// gap), so a map of them stays small where a vector of every rise took 8 bytes a record (25 MB
/// at the peak of `mfu analyze` on a restarted log of 1.26M records, heaptrack, grown by
/// doubling). Past kMostDistinctRises the rises are collected and selected as before.
template <class StepAt>
std::int64_t logging_interval(std::size_t n, StepAt step) {
  constexpr std::size_t kMostDistinctRises = 1024;
  // A rise, in uint64: steps are int64 as an event file gives them, and one near INT64_MIN
  // followed by one near INT64_MAX rises by more than an int64 holds.
  const auto rise_at = [&step](std::size_t i) {
    return static_cast<std::uint64_t>(step(i)) - static_cast<std::uint64_t>(step(i - 1));
  };
  const auto interval = [](std::uint64_t rise) {
    constexpr auto kMost = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::min(rise, kMost)));
  };
  std::map<std::uint64_t, std::size_t> rises;
  std::size_t count = 0;
  for (std::size_t i = 1; i < n && rises.size() <= kMostDistinctRises; ++i)
    if (step(i) > step(i - 1)) {
      ++rises[rise_at(i)];
      ++count;
    }
  if (count == 0) return 1;
  if (rises.size() <= kMostDistinctRises) {
    // The rise of rank count / 2 in ascending order, as nth_element would place it.
    std::size_t rank = count / 2;
    for (const auto& [rise, times] : rises) {
      if (rank < times) return interval(rise);
      rank -= times;
    }
  }
  std::vector<std::uint64_t> d;
  for (std::size_t i = 1; i < n; ++i)
    if (step(i) > step(i - 1)) d.push_back(rise_at(i));
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
  return interval(d[d.size() / 2]);
}

/// The steps of an incarnation seen at or above a bound that only rises, in order: what
/// incarnation_starts looks steps up in. Steps come mostly in rising order, so one goes in at
/// the end and old ones leave at the front (a std::set took a node allocation a record).
class RecentSteps {
 public:
  void forget_below(std::int64_t low) {
    while (head_ < steps_.size() && steps_[head_] < low) ++head_;
    if (head_ > 64 && 2 * head_ > steps_.size()) {
      steps_.erase(steps_.begin(), steps_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  void insert(std::int64_t step) {
    const auto at = std::lower_bound(live(), steps_.end(), step);
    if (at == steps_.end() || *at != step) steps_.insert(at, step);
  }
  [[nodiscard]] bool contains(std::int64_t step) const {
    return std::binary_search(steps_.begin() + static_cast<std::ptrdiff_t>(head_), steps_.end(),
                              step);
  }
  void clear() {
    steps_.clear();
    head_ = 0;
  }

 private:
  std::vector<std::int64_t>::iterator live() {
    return steps_.begin() + static_cast<std::ptrdiff_t>(head_);
  }
  std::vector<std::int64_t> steps_;
  std::size_t head_ = 0;  // steps_[0, head_) are forgotten
};

/// Where a stream of `n` steps splits into incarnations: where a restart mark stands
/// (`marked`, ascending places) and where its step counter goes back (restarts), small
/// reorderings being lines out of order instead. The first place of each (0 first); the
/// places between two starts are one incarnation, to be put in step order.
template <class StepAt>
std::vector<std::size_t> incarnation_starts(std::size_t n, StepAt step,
                                            const std::vector<std::size_t>& marked,
                                            std::size_t& reordered, std::size_t& restarts) {
  const std::int64_t interval = logging_interval(n, step);
  std::vector<std::size_t> starts{0};
  RecentSteps seen;
  std::int64_t max_step = std::numeric_limits<std::int64_t>::min();
  std::size_t next_mark = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t it = step(i);
    while (next_mark < marked.size() && marked[next_mark] < i) ++next_mark;
    // A mark before a stream's first record has no incarnation before it to end.
    const bool stated = i > 0 && next_mark < marked.size() && marked[next_mark] == i;
    if (!stated && (it < 0 || it > max_step)) {
      if (it < 0) continue;  // a record without a step: never looked up
      max_step = it;
      // Only steps within an interval of the highest are looked up: the rest are let go (a
      // set of every step of a long incarnation took 48 B a record).
      seen.forget_below(max_step - interval);
      seen.insert(it);
      continue;
    }
    const bool caught_up = i + 1 == n || step(i + 1) > max_step;
    if (!stated && max_step - it <= interval && caught_up && !seen.contains(it)) {
      ++reordered;
      seen.insert(it);
      continue;
    }
    ++restarts;
    starts.push_back(i);
    seen.clear();
    seen.insert(it);
    max_step = it;
  }
  return starts;
}

/// The restarts an input states, looked up record by record in input order.
class RestartMarks {
 public:
  explicit RestartMarks(std::vector<RestartMark> marks);
  [[nodiscard]] bool empty() const { return marks_.empty() && records_.empty(); }

  /// Whether record `i` (`it`) starts an incarnation: a mark stands at it, or a line mark for
  /// its rank stands after the previous record of that rank in its file (anywhere before, for
  /// its first) and at or before its line.
  bool starts_incarnation(std::size_t i, const Iteration& it);

 private:
  bool after_previous_line(const Iteration& it);
  std::vector<RestartMark> marks_;  // by line
  std::vector<std::size_t> records_;
  std::map<std::pair<std::uint16_t, std::int32_t>, std::uint32_t> last_line_;
};

/// The sums a rank's summary is made of, one record at a time.
class StreamSummary {
 public:
  StreamSummary(std::int32_t rank, std::size_t records, std::size_t restarts);
  void add(const Iteration& it);
  void set_counts(std::size_t records, std::size_t restarts) {
    r_.records = records;
    r_.restarts = restarts;
  }
  [[nodiscard]] RankStream done();

 private:
  RankStream r_;
  double time_ = 0, data_ = 0;
  std::size_t timed_ = 0, waited_ = 0;
};

/// The general case kept as indices into `t` instead of copies of its records: every stream,
/// repeats, restarts and ranks, as the reference path combines them, into `out`. It reads the
/// table once in order, and again record by record where it combines. False (nothing done,
/// `stated` unconsulted) when the table is too large for its 31-bit indices.
bool combine_by_index(const IterationTable& t, const RunMeta& meta, RestartMarks& stated,
                      JobRecords& out);

}  // namespace mfu::detail
