// Where events stand among the records (place_events), and the native copy of a run whose
// records the table holds out of line order (lines printed out of step order, pieces of a job
// given in another order than their steps). The analysis places each event at its slot and
// the copy writes it there, so the copy analyses as the run does.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "mfu/analysis.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

using test::temp_log;

using Place = std::pair<std::uint16_t, std::uint32_t>;  // file, line

IterationTable table_at(const std::vector<Place>& places) {
  IterationTable t;
  std::int64_t step = 0;
  for (const auto& [file, line] : places) {
    Iteration it;
    it.step = ++step;
    it.time_s = 1;
    it.file = file;
    it.line = line;
    t.push_back(it);
  }
  return t;
}

std::vector<Event> events_at(const std::vector<Place>& places) {
  std::vector<Event> events;
  for (const auto& [file, line] : places) {
    Event e;
    e.file = file;
    e.line = line;
    events.push_back(e);
  }
  return events;
}

/// Each event's slot, in the order of `events` (place_events returns them by slot).
std::vector<std::size_t> slots_of(const IterationTable& t, const std::vector<Event>& events) {
  std::vector<const Event*> ptrs;
  for (const Event& e : events) ptrs.push_back(&e);
  std::vector<std::size_t> slots(events.size(), SIZE_MAX);
  for (const SlottedEvent& s : place_events(t, ptrs))
    slots[static_cast<std::size_t>(s.event - events.data())] = s.slot;
  return slots;
}

// One file in line order: records at lines 2, 4, 6. An event at line 1 precedes them all (slot
// 0); at line 4, the record on its own line counts as before it (slot 2); at 5, slot 2; at 9,
// after the last (slot 3).
TEST(PlaceEvents, InLineOrderAnEventFollowsTheRecordsPrintedBeforeIt) {
  const IterationTable t = table_at({{0, 2}, {0, 4}, {0, 6}});
  EXPECT_EQ(slots_of(t, events_at({{0, 1}, {0, 4}, {0, 5}, {0, 9}})),
            (std::vector<std::size_t>{0, 2, 2, 3}));
}

// One file whose table holds a line printed late in its step's place: lines 2, 4, 8, 5, 6
// (step 3 printed at line 8). An event at line 9 comes after all five (slot 5), though step 3
// was printed just before it; at line 7, after the records of lines 2, 4, 5, 6 (table indices
// 0, 1, 3, 4: slot 5); at line 5, after 0, 1, 3 (slot 4); at line 3, after 0 (slot 1).
TEST(PlaceEvents, AnEventFollowsEveryRecordPrintedBeforeItWhereverTheTablePutsThem) {
  const IterationTable t = table_at({{0, 2}, {0, 4}, {0, 8}, {0, 5}, {0, 6}});
  EXPECT_EQ(slots_of(t, events_at({{0, 9}, {0, 7}, {0, 5}, {0, 3}})),
            (std::vector<std::size_t>{5, 5, 4, 1}));
}

// Two pieces of a job given in the other order: the table holds file 1's records (lines 2, 3:
// indices 0, 1), then file 0's (lines 2, 3: indices 2, 3). An event at file 0's line 1 stands
// before file 0's first record (slot 2), not before the whole job; at file 1's line 1, slot 0;
// at file 0's line 9, after file 0's last (slot 4); at file 1's line 9, slot 2. An event of a
// file without records (file 2) comes after every record of the files before it (slot 4).
TEST(PlaceEvents, LinesOfDifferentFilesAreNotCompared) {
  const IterationTable t = table_at({{1, 2}, {1, 3}, {0, 2}, {0, 3}});
  EXPECT_EQ(slots_of(t, events_at({{0, 1}, {1, 1}, {0, 9}, {1, 9}, {2, 1}})),
            (std::vector<std::size_t>{2, 0, 4, 2, 4}));
}

/// The slot by its definition, record by record (a second code path for the sweep).
std::size_t slot_by_definition(const IterationTable& t, const Event& e) {
  std::size_t slot = 0;
  bool in_file = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t.file(i) == e.file && t.line(i) <= e.line) {
      slot = std::max(slot, i + 1);
      in_file = true;
    }
  }
  if (in_file) return slot;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t.file(i) == e.file) return i;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (Place{t.file(i), t.line(i)} <= Place{e.file, e.line}) slot = std::max(slot, i + 1);
  return slot;
}

// 3,000 generated tables of 0..30 records in 1..3 files at random lines (repeated lines and
// any order), with 1..8 events, some in a file without records: every slot is the one the
// definition gives, and the events come by slot, then by file and line.
TEST(PlaceEvents, GeneratedTablesGiveTheSlotsOfTheDefinition) {
  std::mt19937 rng(20261206);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int c = 0; c < 3000; ++c) {
    const int files = uniform(1, 3);
    std::vector<Place> records(static_cast<std::size_t>(uniform(0, 30)));
    for (auto& p : records)
      p = {static_cast<std::uint16_t>(uniform(0, files - 1)),
           static_cast<std::uint32_t>(uniform(1, 40))};
    std::vector<Place> at(static_cast<std::size_t>(uniform(1, 8)));
    for (auto& p : at)
      p = {static_cast<std::uint16_t>(uniform(0, files)),
           static_cast<std::uint32_t>(uniform(0, 45))};
    const IterationTable t = table_at(records);
    const std::vector<Event> events = events_at(at);
    const std::vector<std::size_t> got = slots_of(t, events);
    for (std::size_t k = 0; k < events.size(); ++k)
      ASSERT_EQ(got[k], slot_by_definition(t, events[k])) << "case " << c << " event " << k;
    std::vector<const Event*> ptrs;
    for (const Event& e : events) ptrs.push_back(&e);
    const std::vector<SlottedEvent> placed = place_events(t, ptrs);
    for (std::size_t k = 1; k < placed.size(); ++k) {
      const SlottedEvent &a = placed[k - 1], &b = placed[k];
      ASSERT_TRUE(a.slot < b.slot || (a.slot == b.slot && Place{a.event->file, a.event->line} <=
                                                              Place{b.event->file, b.event->line}))
          << "case " << c;
    }
  }
}

// ---- the analysis, and the native copy ----------------------------------------------------

Analysis analysed(const Run& run) {
  AnalyzeOptions o;
  o.peak_flops = 989e12;
  o.gpus = 8;
  return analyze(run, o);
}

std::string native_copy(const Run& run) {
  std::ostringstream out;
  write_native(run, out);
  return out.str();
}

// Steps 1..4 of 1 s but step 3 (3 s), step 4 printed before step 3, then a 5 s save at step 3:
//   line 1 meta, 2 step 1, 3 step 2, 4 step 4, 5 step 3, 6 save.
// The table holds steps 1, 2, 3, 4; the save follows all four records printed before it, so it
// sits after step 4, which does not hold step 3: its 5 s lie outside every record (no clock).
// Wall = 1 + 1 + 3 + 1 + 5 = 11 s. Checkpoint: the save's 5 s and the 2 s by which step 3, the
// save's step, is slower than the 1 s pace (a stall at a checkpoint step): 7 s. (Placed by the
// line printed just before it, the save sat in step 3's excess: 9 s, while the copy, written
// in table order, said 11 s.)
TEST(PlaceEvents, ASaveAfterALinePrintedLateFollowsTheWholeTable) {
  const std::string log =
      "{\"type\":\"meta\",\"gpu\":\"h100-sxm\",\"gpus\":8}\n"
      "{\"step\":1,\"time_s\":1,\"tokens\":1000}\n"
      "{\"step\":2,\"time_s\":1,\"tokens\":1000}\n"
      "{\"step\":4,\"time_s\":1,\"tokens\":1000}\n"
      "{\"step\":3,\"time_s\":3,\"tokens\":1000}\n"
      "{\"type\":\"event\",\"kind\":\"checkpoint\",\"step\":3,\"duration_s\":5}\n";
  const mfu::Run run = ingest_text(log, "late.jsonl");
  ASSERT_EQ(run.iterations.size(), 4u);
  ASSERT_EQ(run.iterations.step(2), 3);
  const Analysis a = analysed(run);
  EXPECT_DOUBLE_EQ(a.wall_time_s, 11.0);
  EXPECT_DOUBLE_EQ(a.bucket(BucketId::kCheckpoint)->seconds, 7.0);
  const Analysis copy = analysed(ingest_text(native_copy(run), "copy.jsonl"));
  EXPECT_DOUBLE_EQ(copy.wall_time_s, 11.0);
  EXPECT_DOUBLE_EQ(copy.bucket(BucketId::kCheckpoint)->seconds, 7.0);
}

/// A generated job: its lines as printed (records, some pairs of neighbours swapped, and
/// events between them), cut into one or two pieces.
struct GeneratedJob {
  std::vector<std::string> pieces;
  bool swapped = false;
};

std::string record_line(std::int64_t step, double time_s, double end_s, bool stamped) {
  std::string s = fmt::format(R"({{"step":{},"time_s":{},"tokens":4096)", step, time_s);
  if (stamped) s += fmt::format(R"(,"timestamp":{})", end_s);
  return s + "}\n";
}

std::string event_line(const char* kind, std::int64_t step, double duration_s) {
  return fmt::format(R"({{"type":"event","kind":"{}","step":{},"duration_s":{}}})", kind, step,
                     duration_s) +
         "\n";
}

GeneratedJob generate_job(std::mt19937& rng) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int steps = uniform(6, 24);
  const bool stamped = uniform(0, 1) == 1;
  // Each step's record, with its events printed after it; an event's seconds lie in the clock
  // gap before the next record (all, part or none of them) and slow steps leave excess.
  std::vector<std::string> after_step(static_cast<std::size_t>(steps) + 1);
  std::vector<std::string> record(static_cast<std::size_t>(steps) + 1);
  std::string before_first;
  if (uniform(0, 2) == 0) before_first = event_line("checkpoint_load", 0, uniform(1, 9));
  double clock = 1000;
  for (int s = 1; s <= steps; ++s) {
    const double t = uniform(0, 3) == 0 ? uniform(2, 6) : 1;
    clock += t;
    record[static_cast<std::size_t>(s)] = record_line(s, t, clock, stamped);
    if (uniform(0, 3) == 0) {
      const char* kind = uniform(0, 1) == 0 ? "checkpoint" : "eval";
      const int at = uniform(0, 2) == 0 ? s + 1 : s;  // the step it ran at, or the next one
      const double d = uniform(1, 8);
      after_step[static_cast<std::size_t>(s)] += event_line(kind, at, d);
      clock += uniform(0, 2) * d / 2;  // the gap holds none, half or all of it
    }
  }
  // Print order: neighbouring steps swapped now and then (their events stay after the slot).
  std::vector<int> order;
  for (int s = 1; s <= steps; ++s) order.push_back(s);
  GeneratedJob job;
  for (std::size_t k = 1; k + 1 < order.size(); k += static_cast<std::size_t>(uniform(2, 6))) {
    if (uniform(0, 1) == 0) continue;
    std::swap(order[k], order[k + 1]);
    job.swapped = true;
  }
  std::vector<std::string> lines;
  lines.push_back(before_first);
  for (int s : order)
    lines.push_back(record[static_cast<std::size_t>(s)] + after_step[static_cast<std::size_t>(s)]);
  const std::string meta = "{\"type\":\"meta\",\"gpu\":\"h100-sxm\",\"gpus\":8}\n";
  const std::size_t cut =
      uniform(0, 1) == 0 ? lines.size() : uniform(3, static_cast<int>(lines.size()) - 2);
  std::string first = meta, second = meta;
  for (std::size_t k = 0; k < lines.size(); ++k) (k < cut ? first : second) += lines[k];
  job.pieces.push_back(first);
  if (cut < lines.size()) job.pieces.push_back(second);
  return job;
}

/// Writes `text` to a file of this test run's own and returns its path.
Run read_job(const GeneratedJob& job, bool reversed) {
  if (job.pieces.size() == 1) return ingest_text(job.pieces[0], "job.jsonl");
  std::vector<std::string> paths = {temp_log("a.jsonl", job.pieces[0]),
                                    temp_log("b.jsonl", job.pieces[1])};
  if (reversed) std::swap(paths[0], paths[1]);
  Run run = ingest(paths, IngestOptions{});
  for (const auto& p : paths) std::filesystem::remove(p);
  return run;
}

bool out_of_line_order(const Run& run) {
  const IterationTable& t = run.iterations;
  for (std::size_t i = 1; i < t.size(); ++i)
    if (Place{t.file(i), t.line(i)} < Place{t.file(i - 1), t.line(i - 1)}) return true;
  return false;
}

void expect_same(double a, double b, const std::string& what) {
  EXPECT_NEAR(a, b, 1e-9 * std::max(1.0, std::fabs(a))) << what;
}

// 600 generated jobs: 6..24 steps (a quarter slow), checkpoints and evaluations after a
// quarter of them at their step or the next, their seconds in the clock gap or not, a
// checkpoint load before the first record now and then, neighbouring lines swapped, half with
// timestamps, half cut into two pieces (read in either order). The native copy of each run
// analyses as the run: the same wall time and the same seconds in every bucket. Most of them
// hold their records out of line order (counted: the class is exercised).
TEST(PlaceEvents, TheNativeCopyOfARunOutOfLineOrderAnalysesAsTheRun) {
  std::mt19937 rng(7);
  int exercised = 0;
  for (int c = 0; c < 600; ++c) {
    const GeneratedJob job = generate_job(rng);
    const mfu::Run run = read_job(job, c % 2 == 1);
    const std::string copy = native_copy(run);
    const mfu::Run back = ingest_text(copy, "copy.jsonl");
    const Analysis a = analysed(run), b = analysed(back);
    const std::string trace = fmt::format("case {}\n{}", c, copy);
    expect_same(a.wall_time_s, b.wall_time_s, "wall, " + trace);
    ASSERT_EQ(a.buckets.size(), b.buckets.size());
    for (std::size_t k = 0; k < a.buckets.size(); ++k)
      expect_same(a.buckets[k].seconds, b.buckets[k].seconds, a.buckets[k].name + ", " + trace);
    if (HasFailure()) return;
    exercised += out_of_line_order(run) && !run.events.empty() ? 1 : 0;
  }
  EXPECT_GT(exercised, 200);
}

}  // namespace
}  // namespace mfu
