#pragma once
// From records as the log holds them to one record per step of the job.
//
// The records of a log (or of several per-rank logs) are first split into one stream per rank
// (the rank a record's line was tagged with; untagged records form one stream). Within a
// stream, repeats of one step are grouped: identical repeats are one record, micro-batch lines
// (gradient accumulation; told by timestamps that advance by the records' times, or by the
// stated accumulation steps) add up into their step, and other repeats (untagged ranks, two
// loggers of one step) are combined as ranks are. A step that goes back within a stream is a
// restart unless it is a small reordering (back by at most the logging interval, caught up at once,
// a step not yet seen): buffered writers swap lines. Each stream so becomes a list of job
// incarnations; incarnation k of every stream is combined per step: the slowest rank sets the
// step's time and its timers are the step's timers (never mixed phase by phase), the step's
// place is where it first appears, and its timestamp is the latest (the step ends when the
// slowest rank does). Restarts an input states (RestartMark) split a stream where they stand,
// and repeats of one step on either side of one are not grouped.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "mfu/run.hpp"

namespace mfu::detail {

struct JobRecords {
  IterationTable table;                   ///< one record per step, incarnation by incarnation
  std::vector<std::size_t> incarnations;  ///< index in `table` where each one starts
  std::vector<RankStream> streams;        ///< one per rank that printed records (tagged)
  std::size_t duplicates = 0;             ///< identical repeats dropped
  std::size_t micro_batches = 0;          ///< micro-batch records folded into their step
  std::size_t rank_records = 0;           ///< records of other ranks combined into a step
  std::size_t reordered = 0;              ///< records put back in step order
  bool incarnations_disagree = false;     ///< ranks restarted a different number of times
};

/// Where an input says the job restarted (a native "restart" event line): the next record of
/// its rank in its file (of every rank, when the mark names none) starts a new incarnation,
/// whatever the step counter shows. A mark on a record's own line applies to that record.
/// A mark with `record` set stands at that record of those combined instead (a restart an
/// input's own reading found, kept when inputs are merged); its file, line and rank are unused.
struct RestartMark {
  std::uint16_t file = 0;
  std::uint32_t line = 0;
  std::int32_t rank = -1;
  std::optional<std::size_t> record;
};

/// Combines `records`; `meta` gives the gradient-accumulation and GPU counts that help tell
/// micro-batches from ranks when the lines carry no rank; `marks` are restarts the input
/// states. A single stream that needs no combining is put in order within the table; other
/// tables are combined from indices into it (rank_stream_parts.hpp: combine_by_index).
/// `in_place` false copies every stream out instead: the reference the tests and the
/// rank_streams fuzz target compare both fast paths with, bit for bit.
[[nodiscard]] JobRecords combine_rank_streams(IterationTable&& records, const RunMeta& meta,
                                              std::vector<RestartMark> marks = {},
                                              bool in_place = true);

/// Events that several ranks printed for one step (each rank's startup timers, a checkpoint
/// every rank reports) are one event of the job: the j-th event of a kind at a step from each
/// rank (or file) is combined into one, the longest duration standing. Returns how many were
/// combined away.
std::size_t combine_rank_events(std::vector<Event>& events);

}  // namespace mfu::detail
