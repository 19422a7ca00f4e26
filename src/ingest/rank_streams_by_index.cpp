// Per-rank streams combined as indices into the table (rank_stream_parts.hpp): several ranks
// in one file, per-rank files, micro-batch lines and repeats, without copying every record
// out. The reference path in rank_streams.cpp copies each stream out as Iterations (~300 B a
// record at its peak: 252 MB for 134 MB of two ranks' native lines); here a stream is 8 B a
// record (its step an offset, and where the record is), and only the records made by combining
// repeats are stored again.
#include <algorithm>
#include <limits>
#include <optional>
#include <queue>

#include "ingest/rank_stream_parts.hpp"

namespace mfu::detail {
namespace {

/// A record of a stream once its repeats are grouped: a record of the table, or, with the
/// top bit set, one made by combining repeats (its place in the table of made records).
using Ref = std::uint32_t;
constexpr Ref kMade = Ref{1} << 31;

/// Records of a table read a block at a time (a column at a time) and kept, for a walk that
/// goes forward in a few places at once: ranks interleaved in one file read each block once,
/// per-rank files keep a block for each. operator[] per record read every column for one
/// record: a third of the time of combining two ranks. Past 64 places (per-rank files of a
/// large job) a block would be read for each record it gives: records are read one by one.
class RecordBlocks {
 public:
  RecordBlocks(const IterationTable& t, std::size_t places)
      : t_(t), one_by_one_(places > kMostPlaces), slots_(one_by_one_ ? 1 : 2 * places + 2) {
    if (one_by_one_) slots_.front().records.resize(1);
  }

  /// Record i; the reference holds until the next call.
  const Iteration& at(std::size_t i) {
    if (one_by_one_) {
      slots_.front().records.front() = t_[i];
      return slots_.front().records.front();
    }
    const std::size_t block = i / kBlock;
    ++tick_;
    if (slots_[last_].block != block) last_ = find_or_read(block);
    slots_[last_].used = tick_;
    return slots_[last_].records[i % kBlock];
  }

 private:
  // Judgements, not published figures: 64 records of 168 B are 10.5 KiB a block, and 64
  // places keep the slots' linear search short (130 slots at most).
  static constexpr std::size_t kBlock = 64;
  static constexpr std::size_t kMostPlaces = 64;
  struct Slot {
    std::size_t block = std::numeric_limits<std::size_t>::max();
    std::uint64_t used = 0;
    std::vector<Iteration> records;
  };

  std::size_t find_or_read(std::size_t block) {
    std::size_t oldest = 0;
    for (std::size_t k = 0; k < slots_.size(); ++k) {
      if (slots_[k].block == block) return k;
      if (slots_[k].used < slots_[oldest].used) oldest = k;
    }
    Slot& s = slots_[oldest];
    const std::size_t first = block * kBlock;
    s.records.resize(std::min(kBlock, t_.size() - first));
    t_.read(first, s.records.size(), s.records.data());
    s.block = block;
    return oldest;
  }

  const IterationTable& t_;
  bool one_by_one_;  // past kMostPlaces: one slot of one record, read through operator[]
  std::vector<Slot> slots_;
  std::size_t last_ = 0;
  std::uint64_t tick_ = 0;
};

/// A grouped record: its step as an offset from the table's lowest step (8 bytes instead of
/// 16: the streams' elements were a fifth of the peak memory of combining two ranks).
struct Element {
  std::uint32_t step_offset;
  Ref ref;
};

/// One rank's stream: its grouped records in line order (then, once split, each incarnation
/// in step order), and the repeats of one step still being read.
struct IndexedStream {
  explicit IndexedStream(std::int32_t rank) : summary(rank, 0, 0) {}
  std::vector<Element> elements;
  std::vector<std::size_t> marked;  ///< elements a stated restart starts an incarnation at
  std::vector<std::size_t> starts;  ///< where each incarnation starts in `elements`
  StreamSummary summary;            ///< added up in line order, as the grouped records come
  std::vector<Iteration> pending;   ///< consecutive records of one step, not yet grouped
  Ref pending_first = 0;            ///< the table index of pending.front()
  bool pending_marked = false;      ///< a stated restart starts at pending.front()
};

class IndexedCombiner {
 public:
  IndexedCombiner(const IterationTable& t, const RunMeta& meta, std::int64_t lowest_step,
                  JobRecords& out)
      : t_(t), meta_(meta), lowest_step_(lowest_step), out_(out) {}

  /// One pass over the table in order: each record joins its rank's stream, repeats of one
  /// step grouped as they end.
  void group(RestartMarks& stated) {
    for_each_record(t_, [&](std::size_t i, const Iteration& it) {
      const bool marked = stated.starts_incarnation(i, it);
      IndexedStream& s = stream_of(it.rank);
      if (!s.pending.empty() && !marked && it.step >= 0 && it.step == s.pending.front().step) {
        s.pending.push_back(it);
        return;
      }
      flush(s);
      s.pending.push_back(it);
      s.pending_first = static_cast<Ref>(i);
      s.pending_marked = marked;
    });
    for (auto& [rank, s] : streams_) flush(s);
  }

  /// Each stream split into incarnations, each in step order, and summarised (in rank order,
  /// as out.streams is indexed).
  void split() {
    for (auto& entry : streams_) {
      IndexedStream& s = entry.second;  // a name the lambda below can capture (clang 14)
      std::size_t restarts = 0;
      s.starts = incarnation_starts(
          s.elements.size(), [&](std::size_t k) { return step_of(s.elements[k]); }, s.marked,
          out_.reordered, restarts);
      s.summary.set_counts(s.elements.size(), restarts);
      out_.streams.push_back(s.summary.done());
      for (std::size_t k = 0; k < s.starts.size(); ++k) {
        const auto first = s.elements.begin() + static_cast<std::ptrdiff_t>(s.starts[k]);
        const auto end = s.elements.begin() + static_cast<std::ptrdiff_t>(end_of(s, k));
        auto by_step = [](const Element& a, const Element& b) {
          return a.step_offset < b.step_offset;
        };
        if (!std::is_sorted(first, end, by_step)) std::stable_sort(first, end, by_step);
      }
    }
  }

  /// Incarnation k of every stream combined per step, k = 0, 1, ...
  void combine() {
    std::size_t most = 0;
    for (const auto& [rank, s] : streams_) {
      if (most != 0 && s.starts.size() != most) out_.incarnations_disagree = true;
      most = std::max(most, s.starts.size());
    }
    table_blocks_.emplace(t_, streams_.size());
    made_blocks_.emplace(made_, streams_.size());
    for (std::size_t k = 0; k < most; ++k) combine_incarnation(k);
    if (out_.streams.size() == 1 && out_.streams.front().rank < 0) out_.streams.clear();
  }

 private:
  /// The stream of `rank`, looked up in a vector for the ranks of a job of up to 4,096 (ranks
  /// alternate line by line in one file: a map lookup per record was a tenth of the pass).
  IndexedStream& stream_of(std::int32_t rank) {
    const auto slot = static_cast<std::size_t>(static_cast<std::int64_t>(rank) + 1);
    if (slot < kDenseRanks && slot < dense_.size() && dense_[slot] != nullptr) return *dense_[slot];
    IndexedStream& s = streams_.try_emplace(rank, rank).first->second;
    if (slot < kDenseRanks) {
      if (slot >= dense_.size()) dense_.resize(slot + 1, nullptr);
      dense_[slot] = &s;
    }
    return s;
  }

  /// The pending repeats of `s` become one grouped record (group_repeats' rules).
  void flush(IndexedStream& s) {
    const std::size_t g = s.pending.size();
    if (g == 0) return;
    if (s.pending_marked) s.marked.push_back(s.elements.size());
    const Iteration* r = s.pending.data();
    if (g == 1) {
      s.summary.add(r[0]);
      s.elements.push_back({offset_of(r[0].step), s.pending_first});
    } else {
      group_repeats(s, r, g);
    }
    s.pending.clear();
  }

  /// `g` > 1 records of one step in a row: a duplicate is its first record; micro-batches and
  /// repeats of ranks are combined into a record made anew.
  void group_repeats(IndexedStream& s, const Iteration* r, std::size_t g) {
    const Repeat kind = classify_repeat(r, g, meta_);
    if (kind == Repeat::kDuplicate) {
      out_.duplicates += g - 1;
      s.summary.add(r[0]);
      s.elements.push_back({offset_of(r[0].step), s.pending_first});
      return;
    }
    Iteration step = r[0];
    if (kind == Repeat::kMicroBatches) {
      for (std::size_t k = 1; k < g; ++k) fold_micro_batch(step, r[k]);
      out_.micro_batches += g - 1;
    } else {
      std::vector<const Iteration*> members;
      for (std::size_t k = 0; k < g; ++k) members.push_back(&r[k]);
      step = combine_ranks(members);
      out_.rank_records += g - 1;
    }
    s.summary.add(step);
    s.elements.push_back({offset_of(r[0].step), make(step)});
  }

  [[nodiscard]] std::uint32_t offset_of(std::int64_t step) const {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(step - lowest_step_));
  }
  [[nodiscard]] std::int64_t step_of(const Element& e) const {
    return lowest_step_ + static_cast<std::int64_t>(e.step_offset);
  }

  Ref make(const Iteration& it) {
    made_.push_back(it);
    return kMade | static_cast<Ref>(made_.size() - 1);
  }

  [[nodiscard]] const Iteration& record(Ref r) {
    if ((r & kMade) != 0) return made_blocks_->at(r & ~kMade);
    return table_blocks_->at(r);
  }

  static std::size_t end_of(const IndexedStream& s, std::size_t k) {
    return k + 1 < s.starts.size() ? s.starts[k + 1] : s.elements.size();
  }

  /// The streams' incarnation k merged by step (ties in stream order, then in the stream's
  /// order: what a stable sort of the streams one after another gives); a run of one step is
  /// one record of the job, the slowest rank's.
  void combine_incarnation(std::size_t k) {
    struct Head {
      std::int64_t step;
      std::size_t stream;
      std::size_t at, end;
      bool operator>(const Head& o) const {
        return step != o.step ? step > o.step : stream > o.stream;
      }
    };
    std::vector<const IndexedStream*> by_index;
    std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
    for (const auto& [rank, s] : streams_) {
      if (k < s.starts.size() && s.starts[k] < end_of(s, k))
        heads.push({step_of(s.elements[s.starts[k]]), by_index.size(), s.starts[k], end_of(s, k)});
      by_index.push_back(&s);
    }
    out_.incarnations.push_back(out_.table.size());
    std::vector<Iteration> members;
    std::vector<std::size_t> member_streams;
    auto next = [&] {
      Head h = heads.top();
      heads.pop();
      members.push_back(record(by_index[h.stream]->elements[h.at].ref));
      member_streams.push_back(h.stream);
      if (++h.at < h.end) {
        h.step = step_of(by_index[h.stream]->elements[h.at]);
        heads.push(h);
      }
    };
    while (!heads.empty()) {
      members.clear();
      member_streams.clear();
      const std::int64_t step = heads.top().step;
      next();
      while (step >= 0 && !heads.empty() && heads.top().step == step) next();
      emit(members, member_streams);
    }
  }

  /// One record of the job from the records of one step (combine_incarnation's rules).
  void emit(const std::vector<Iteration>& members, const std::vector<std::size_t>& streams) {
    member_ptrs_.clear();
    for (const Iteration& m : members) member_ptrs_.push_back(&m);
    Iteration step = combine_ranks(member_ptrs_);
    if (streams_.size() > 1) step.rank = -1;
    if (members.size() > 1) {
      out_.rank_records += members.size() - 1;
      for (std::size_t k = 0; k < members.size(); ++k)
        if (members[k].time_s == step.time_s && known(step.time_s)) {
          ++out_.streams[streams[k]].slowest_steps;
          break;
        }
    }
    out_.table.push_back(step);
  }

  const IterationTable& t_;
  const RunMeta& meta_;
  std::int64_t lowest_step_;  // the offsets' origin
  JobRecords& out_;
  static constexpr std::size_t kDenseRanks = 4097;  // ranks -1 .. 4095
  std::map<std::int32_t, IndexedStream> streams_;   // by rank, as out.streams is
  std::vector<IndexedStream*> dense_;               // streams_ by rank + 1
  IterationTable made_;
  std::optional<RecordBlocks> table_blocks_, made_blocks_;
  std::vector<const Iteration*> member_ptrs_;  // kept: one allocation, not one a step
};

}  // namespace

bool combine_by_index(const IterationTable& t, const RunMeta& meta, RestartMarks& stated,
                      JobRecords& out) {
  if (t.size() >= kMade) return false;
  std::int64_t lowest = 0, highest = 0;
  for_each_record(
      t,
      [&](std::size_t i, const Iteration& it) {
        lowest = i == 0 ? it.step : std::min(lowest, it.step);
        highest = i == 0 ? it.step : std::max(highest, it.step);
      },
      RecordFields::kStep);
  // Steps more than 2^32 apart (a counter of samples, or garbage) take the reference path.
  if (static_cast<std::uint64_t>(highest) - static_cast<std::uint64_t>(lowest) >
      std::numeric_limits<std::uint32_t>::max())
    return false;
  IndexedCombiner c(t, meta, lowest, out);
  c.group(stated);
  c.split();
  c.combine();
  return true;
}

}  // namespace mfu::detail
