// Per-rank streams to one job (see rank_streams.hpp).
#include "ingest/rank_streams.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "ingest/rank_stream_parts.hpp"

namespace mfu::detail {
namespace {

using Stream = std::vector<Iteration>;

/// Groups consecutive records of one step in one stream, never across a stated restart;
/// `marked` (the records a restart mark starts an incarnation at, ascending) becomes their
/// places in the grouped stream.
Stream group_repeats(const Stream& in, std::vector<std::size_t>& marked, const RunMeta& meta,
                     JobRecords& out) {
  Stream grouped;
  grouped.reserve(in.size());
  std::vector<std::size_t> marked_grouped;
  auto is_marked = [&](std::size_t i) {
    return std::binary_search(marked.begin(), marked.end(), i);
  };
  for (std::size_t i = 0; i < in.size();) {
    std::size_t g = 1;
    while (i + g < in.size() && in[i + g].step == in[i].step && in[i].step >= 0 &&
           !is_marked(i + g))
      ++g;
    if (is_marked(i)) marked_grouped.push_back(grouped.size());
    if (g == 1) {
      grouped.push_back(in[i++]);
      continue;
    }
    const Repeat kind = classify_repeat(&in[i], g, meta);
    if (kind == Repeat::kDuplicate) {
      grouped.push_back(in[i]);
      out.duplicates += g - 1;
    } else if (kind == Repeat::kMicroBatches) {
      Iteration step = in[i];
      for (std::size_t k = 1; k < g; ++k) fold_micro_batch(step, in[i + k]);
      grouped.push_back(step);
      out.micro_batches += g - 1;
    } else {
      std::vector<const Iteration*> members;
      for (std::size_t k = 0; k < g; ++k) members.push_back(&in[i + k]);
      grouped.push_back(combine_ranks(members));
      out.rank_records += g - 1;
    }
    i += g;
  }
  marked = std::move(marked_grouped);
  return grouped;
}

/// Splits a stream into its incarnations (incarnation_starts), each in step order.
std::vector<Stream> split_incarnations(const Stream& s, const std::vector<std::size_t>& marked,
                                       std::size_t& reordered, std::size_t& restarts) {
  const std::vector<std::size_t> starts = incarnation_starts(
      s.size(), [&](std::size_t i) { return s[i].step; }, marked, reordered, restarts);
  std::vector<Stream> parts;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : s.size();
    Stream& p = parts.emplace_back(s.begin() + static_cast<std::ptrdiff_t>(starts[k]),
                                   s.begin() + static_cast<std::ptrdiff_t>(end));
    std::stable_sort(p.begin(), p.end(),
                     [](const Iteration& a, const Iteration& b) { return a.step < b.step; });
  }
  return parts;
}

/// A rank's stream summarised.
RankStream summarise(std::int32_t rank, const Stream& s, std::size_t restarts) {
  StreamSummary sum(rank, s.size(), restarts);
  for (const Iteration& it : s) sum.add(it);
  return sum.done();
}

/// The one stream of a table summarised, reading only the columns the summary needs.
RankStream summarise(std::int32_t rank, const IterationTable& t, std::size_t restarts) {
  StreamSummary sum(rank, t.size(), restarts);
  for_each_record(
      t, [&](std::size_t, const Iteration& it) { sum.add(it); },
      RecordFields::kTime | RecordFields::kPhases | RecordFields::kTimestamp);
  return sum.done();
}

/// Combines incarnation k of every stream per step, in step order.
void combine_incarnation(const std::vector<std::pair<std::size_t, const Stream*>>& parts,
                         bool several_streams, JobRecords& out) {
  struct Member {
    std::int64_t step;
    std::size_t stream;
    const Iteration* it;
  };
  std::vector<Member> all;
  for (const auto& [stream, p] : parts)
    for (const auto& it : *p) all.push_back({it.step, stream, &it});
  std::stable_sort(all.begin(), all.end(),
                   [](const Member& a, const Member& b) { return a.step < b.step; });
  out.incarnations.push_back(out.table.size());
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i + 1;
    while (j < all.size() && all[j].step == all[i].step && all[i].step >= 0) ++j;
    std::vector<const Iteration*> members;
    for (std::size_t k = i; k < j; ++k) members.push_back(all[k].it);
    Iteration step = combine_ranks(members);
    // A record of several ranks' streams is the job's, no one rank's: read again (a native
    // copy), it stays in its place instead of joining one rank's stream.
    if (several_streams) step.rank = -1;
    if (j - i > 1) {
      out.rank_records += j - i - 1;
      for (std::size_t k = i; k < j; ++k)
        if (all[k].it->time_s == step.time_s && known(step.time_s)) {
          ++out.streams[all[k].stream].slowest_steps;
          break;
        }
    }
    out.table.push_back(step);
    i = j;
  }
}

/// One rank (or none), every step after the one before: nothing to combine. The common case
/// is checked without copying the records (the table of a long run stays as it is).
bool one_ordered_stream(const IterationTable& t) {
  if (t.empty()) return true;
  const std::int32_t rank = t.rank(0);
  std::int64_t prev_step = 0;
  bool ordered = true;
  // A pass over two columns (a record at a time through step() and rank() was 52 ms on 5.6M
  // records); it runs to the end, an unordered run being the rare case.
  for_each_record(
      t,
      [&](std::size_t i, const Iteration& it) {
        if ((i > 0 && it.step <= prev_step) || it.rank != rank) ordered = false;
        prev_step = it.step;
      },
      RecordFields::kStep | RecordFields::kRank);
  return ordered;
}

/// Sorts records [lo, hi] of the table by step, and their steps alike.
void sort_window(IterationTable& t, std::vector<std::int64_t>& steps, std::size_t lo,
                 std::size_t hi) {
  std::vector<Iteration> window(hi - lo + 1);
  t.read(lo, window.size(), window.data());
  std::stable_sort(window.begin(), window.end(),
                   [](const Iteration& a, const Iteration& b) { return a.step < b.step; });
  for (std::size_t k = 0; k < window.size(); ++k) {
    t.set(lo + k, window[k]);
    steps[lo + k] = window[k].step;
  }
}

/// Puts incarnation [first, end) of a single stream in step order, moving only the stretches
/// around each record out of place (its steps are distinct: a step seen in an incarnation
/// starts the next). Left to right, everything before the scan is in order: at a step that
/// goes down, the stretch takes the steps before it that are above its lowest, and is sorted.
/// It first takes the steps after it that are below the step before it, so that a record
/// printed early moves in one stretch instead of one place per stretch.
void sort_incarnation(IterationTable& t, std::vector<std::int64_t>& steps, std::size_t first,
                      std::size_t end) {
  for (std::size_t k = first; k + 1 < end; ++k) {
    if (steps[k] <= steps[k + 1]) continue;
    const std::int64_t high = steps[k];
    std::size_t lo = k, hi = k + 1;
    std::int64_t low = steps[k + 1];
    while (hi + 1 < end && steps[hi + 1] < high) low = std::min(low, steps[++hi]);
    while (lo > first && steps[lo - 1] > low) --lo;
    sort_window(t, steps, lo, hi);
    k = hi - 1;  // the next pair to look at is (hi, hi + 1)
  }
}

/// One rank (or none) whose records need no combining (no step printed twice in a row but
/// across a stated restart, no negative step): its restarts and lines out of order are found
/// from the steps alone, and the records out of place move within the table. Copying every
/// record out as an Iteration made one restart in a 300 MB log take 1 GB and 3.6 s instead of
/// 83 MB and 0.75 s. False (and nothing changed but `stated` consulted) when it does not apply.
bool combine_one_stream(IterationTable& t, RestartMarks& stated, JobRecords& out) {
  const std::size_t n = t.size();
  const std::int32_t rank = t.rank(0);
  std::vector<std::int64_t> steps(n);
  std::vector<std::size_t> marked;
  bool one = true;
  for_each_record(
      t,
      [&](std::size_t i, const Iteration& it) {
        if (!one) return;
        one = it.rank == rank && it.step >= 0;
        steps[i] = it.step;
        if (stated.starts_incarnation(i, it)) marked.push_back(i);
        if (i > 0 && steps[i] == steps[i - 1] && (marked.empty() || marked.back() != i))
          one = false;  // a step printed twice: grouped as repeats
      },
      RecordFields::kStep | RecordFields::kRank | RecordFields::kLine | RecordFields::kFile);
  if (!one) return false;
  std::size_t restarts = 0;
  out.incarnations = incarnation_starts(
      n, [&](std::size_t i) { return steps[i]; }, marked, out.reordered, restarts);
  // The summary adds up the records in line order, before any moves.
  if (rank >= 0) out.streams.push_back(summarise(rank, t, restarts));
  for (std::size_t k = 0; k < out.incarnations.size(); ++k)
    sort_incarnation(t, steps, out.incarnations[k],
                     k + 1 < out.incarnations.size() ? out.incarnations[k + 1] : n);
  out.table = std::move(t);
  return true;
}

}  // namespace

JobRecords combine_rank_streams(IterationTable&& records, const RunMeta& meta,
                                std::vector<RestartMark> marks, bool in_place) {
  JobRecords out;
  if (records.empty()) {  // one incarnation, empty: every path says so
    out.incarnations.push_back(0);
    return out;
  }
  RestartMarks stated(marks);
  if (in_place && stated.empty() && one_ordered_stream(records)) {
    out.incarnations.push_back(0);
    if (!records.empty() && records[0].rank >= 0)
      out.streams.push_back(summarise(records.rank(0), records, 0));
    out.table = std::move(records);
    return out;
  }
  if (in_place && !records.empty()) {
    RestartMarks consulted(std::move(marks));  // `stated` stays unconsulted for the general case
    if (combine_one_stream(records, consulted, out)) return out;
    out = JobRecords{};
    if (combine_by_index(records, meta, stated, out)) {
      records.clear();
      return out;
    }
    out = JobRecords{};
  }
  std::map<std::int32_t, Stream> by_rank;
  std::map<std::int32_t, std::vector<std::size_t>> marked;  // per stream, ascending
  for_each_record(records, [&](std::size_t i, const Iteration& it) {
    Stream& stream = by_rank[it.rank];
    if (stated.starts_incarnation(i, it)) marked[it.rank].push_back(stream.size());
    stream.push_back(it);
  });
  records.clear();
  std::vector<std::vector<Stream>> incarnations;
  for (auto& [rank, stream] : by_rank) {
    std::vector<std::size_t>& starts = marked[rank];
    Stream grouped = group_repeats(stream, starts, meta, out);
    stream.clear();
    stream.shrink_to_fit();
    std::size_t restarts = 0;
    incarnations.push_back(split_incarnations(grouped, starts, out.reordered, restarts));
    out.streams.push_back(summarise(rank, grouped, restarts));
  }
  std::size_t most = 0;
  for (const auto& inc : incarnations) {
    if (most != 0 && inc.size() != most) out.incarnations_disagree = true;
    most = std::max(most, inc.size());
  }
  for (std::size_t k = 0; k < most; ++k) {
    std::vector<std::pair<std::size_t, const Stream*>> parts;
    for (std::size_t s = 0; s < incarnations.size(); ++s)
      if (k < incarnations[s].size()) parts.emplace_back(s, &incarnations[s][k]);
    combine_incarnation(parts, incarnations.size() > 1, out);
  }
  if (out.streams.size() == 1 && out.streams.front().rank < 0) out.streams.clear();
  return out;
}

std::size_t combine_rank_events(std::vector<Event>& events) {
  // Group by (kind, step); within a group, the j-th event of each printer is one job event.
  std::vector<std::size_t> order(events.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Event &x = events[a], &y = events[b];
    return x.kind != y.kind ? x.kind < y.kind : x.step < y.step;
  });
  std::vector<bool> drop(events.size(), false);
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i + 1;
    const Event& head = events[order[i]];
    while (j < order.size() && events[order[j]].kind == head.kind &&
           events[order[j]].step == head.step)
      ++j;
    if (head.kind != EventKind::kRestart && j - i > 1) {
      std::map<std::pair<std::int32_t, std::uint16_t>, std::size_t> nth;  // printer -> seen
      std::vector<std::size_t> kept;  // the j-th kept event of this group
      for (std::size_t k = i; k < j; ++k) {
        Event& e = events[order[k]];
        const std::size_t n = nth[{e.rank, e.file}]++;
        if (n >= kept.size()) {
          kept.push_back(order[k]);
          continue;
        }
        Event& into = events[kept[n]];
        if (known(e.duration_s) && (!known(into.duration_s) || e.duration_s > into.duration_s))
          into.duration_s = e.duration_s;
        drop[order[k]] = true;
        ++dropped;
      }
    }
    i = j;
  }
  if (dropped == 0) return 0;
  std::vector<Event> kept;
  kept.reserve(events.size() - dropped);
  for (std::size_t k = 0; k < events.size(); ++k)
    if (!drop[k]) kept.push_back(std::move(events[k]));
  events = std::move(kept);
  return dropped;
}

}  // namespace mfu::detail
