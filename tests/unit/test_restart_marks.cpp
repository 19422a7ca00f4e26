// Restarts a log states (a native "restart" event line) and the native copy of a run with
// restarts. The step counter alone cannot always tell a restart from lines written out of
// order, nor a step repeated across a restart from one step printed twice: a run combined from
// several ranks' streams, written as one stream, loses the streams that told them apart. The
// copy therefore marks each incarnation, and the reader splits where a mark stands.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "mfu/analysis.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

using test::temp_log;

struct Line {
  std::int32_t rank = -1;  // a "rank" key when >= 0
  std::int64_t step = 0;
  double time_s = 1.0;
};

std::string record(const Line& l) {
  std::string s = fmt::format(R"({{"step":{},"time_s":{})", l.step, l.time_s);
  if (l.rank >= 0) s += fmt::format(R"(,"rank":{})", l.rank);
  return s + "}\n";
}

constexpr const char* kMeta = R"({"type":"meta","gpu":"h100-sxm","gpus":8,"dtype":"bf16"})"
                              "\n";
constexpr const char* kRestart = R"({"type":"event","kind":"restart"})"
                                 "\n";

std::string restart_log_of(const std::vector<Line>& lines) {
  std::string text = kMeta;
  for (const auto& l : lines) text += record(l);
  return text;
}

std::vector<const Event*> restarts_of(const Run& run) {
  std::vector<const Event*> r;
  for (const auto& e : run.events)
    if (e.kind == EventKind::kRestart) r.push_back(&e);
  return r;
}

std::string native_copy(const Run& run) {
  std::ostringstream out;
  write_native(run, out);
  return out.str();
}

/// The copy reads back as the run: the same records in the same order, the same incarnations;
/// and a copy of the copy is the same text.
void expect_copy_reads_back(const Run& run) {
  const std::string copy = native_copy(run);
  const mfu::Run back = ingest_text(copy, "copy.jsonl");
  ASSERT_EQ(back.iterations.size(), run.iterations.size()) << copy;
  for (std::size_t i = 0; i < run.iterations.size(); ++i) {
    const Iteration x = run.iterations[i], y = back.iterations[i];
    ASSERT_EQ(x.step, y.step) << "record " << i << "\n" << copy;
    EXPECT_EQ(x.count, y.count) << "record " << i;
    EXPECT_EQ(x.time_s, y.time_s) << "record " << i;
  }
  EXPECT_EQ(back.restarts_at, run.restarts_at);
  EXPECT_EQ(restarts_of(back).size(), restarts_of(run).size());
  EXPECT_EQ(native_copy(back), copy);
}

// Rank 5 prints step 149, then step 99 (it restarted, 50 steps back); an untagged line prints
// step 49. By hand: rank 5's stream is [149 | 99] (its counter went back 50 steps, more than
// its logging interval: a restart), the untagged stream [49]. Incarnation 0 is {49, 149},
// incarnation 1 is {99}: the table is 49, 149, 99 with the restart at index 2. Written as one
// untagged stream, 49, 149, 99 has a logging interval of 100, and 99 would pass for a line
// swapped with 149 (49, 99, 149) without the mark.
TEST(RestartMarks, ACopyKeepsARestartThatLooksLikeASwappedLine) {
  const mfu::Run run = ingest_text(restart_log_of({{5, 149}, {5, 99}, {-1, 49}}), "ranks.jsonl");
  EXPECT_EQ(test::steps_of(run), (std::vector<std::int64_t>{49, 149, 99}));
  EXPECT_EQ(run.restarts_at, (std::vector<std::size_t>{2}));
  expect_copy_reads_back(run);
}

// A log that states its restarts: steps 1..5, a restart, three more steps from a step given
// below. By hand, for each: a restart at index 5, lost steps = 5 - (first step after - 1).
// - From 6 (resumed from the checkpoint of step 5, nothing redone): 0 lost; the counter does
//   not show this restart.
// - From 3: 3 lost.
// - From 5 (the step it died in): 1 lost; without the mark, the two 5s in a row would be one
//   step printed twice (7 records, no restart).
// Each is one restart event, not the stated one and a derived one.
TEST(RestartMarks, AStatedRestartSplitsWhereItStands) {
  struct Case {
    std::int64_t resume_at;
    std::int64_t lost;
  };
  for (const Case c : {Case{6, 0}, Case{3, 3}, Case{5, 1}}) {
    SCOPED_TRACE(c.resume_at);
    std::string text = kMeta;
    for (std::int64_t s = 1; s <= 5; ++s) text += record({-1, s});
    text += kRestart;
    for (std::int64_t s = c.resume_at; s < c.resume_at + 3; ++s) text += record({-1, s});
    const mfu::Run run = ingest_text(text, "stated.jsonl");
    EXPECT_EQ(run.iterations.size(), 8u);
    EXPECT_EQ(run.restarts_at, (std::vector<std::size_t>{5}));
    ASSERT_EQ(restarts_of(run).size(), 1u);
    EXPECT_EQ(restarts_of(run)[0]->steps_lost, c.lost);
    expect_copy_reads_back(run);
  }
}

// A mark that names no rank restarts every rank at its next record; one that names a rank
// restarts only that rank. Ranks 0 and 1 print steps 1..4, then a mark, then two more steps
// each. Unnamed, with steps 3, 4 after it: by hand each stream is [1 2 3 4 | 3 4], the table
// 1 2 3 4 3 4 with the restart at index 4. Named for rank 1, with steps 5, 6 after it: rank 1
// splits at its 5, rank 0 does not; incarnation 0 is rank 0's 1..6 with rank 1's 1..4,
// incarnation 1 rank 1's 5, 6: the table 1 2 3 4 5 6 5 6 with the restart at index 6 (had the
// mark restarted rank 0 too: 1 2 3 4 5 6 with the restart at index 4).
TEST(RestartMarks, AMarkRestartsItsRankOrEveryRank) {
  auto text_of = [](const char* mark, std::int64_t resume) {
    std::string text = kMeta;
    for (std::int64_t s = 1; s <= 4; ++s)
      for (std::int32_t r : {0, 1}) text += record({r, s});
    text += mark;
    for (std::int64_t s = resume; s < resume + 2; ++s)
      for (std::int32_t r : {0, 1}) text += record({r, s});
    return text;
  };
  const mfu::Run every = ingest_text(text_of(kRestart, 3), "every.jsonl");
  EXPECT_EQ(test::steps_of(every), (std::vector<std::int64_t>{1, 2, 3, 4, 3, 4}));
  EXPECT_EQ(every.restarts_at, (std::vector<std::size_t>{4}));
  const mfu::Run one = ingest_text(text_of(R"({"type":"event","kind":"restart","rank":1})"
                                           "\n",
                                           5),
                                   "one.jsonl");
  EXPECT_EQ(test::steps_of(one), (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 5, 6}));
  EXPECT_EQ(one.restarts_at, (std::vector<std::size_t>{6}));
  expect_copy_reads_back(every);
  expect_copy_reads_back(one);
}

// The parallel reader numbers a piece's lines from the start of the file, so a mark in a
// later piece stands where the streaming reader puts it: 3,000 steps with a restart stated
// after step 2,000 (resumed from its checkpoint: only the mark shows it). By hand: the restart
// at index 2,000 and 2,000 - (2,001 - 1) = 0 steps lost, in both readers.
TEST(RestartMarks, PiecesReadInParallelKeepTheMarkInItsPlace) {
  std::string text = kMeta;
  for (std::int64_t s = 1; s <= 2000; ++s) text += record({-1, s});
  text += kRestart;
  for (std::int64_t s = 2001; s <= 3000; ++s) text += record({-1, s});
  const auto path =
      std::filesystem::temp_directory_path() / fmt::format("mfu_marks_{}.jsonl", ::getpid());
  std::ofstream(path) << text;
  IngestOptions parallel;
  parallel.threads = 4;
  parallel.parallel_min_bytes = 1;
  const mfu::Run from_disk = ingest({path.string()}, parallel);
  std::filesystem::remove(path);
  const mfu::Run streamed = ingest_text(text, path.string());
  for (const mfu::Run* r : {&from_disk, &streamed}) {
    EXPECT_EQ(r->iterations.size(), 3000u);
    EXPECT_EQ(r->restarts_at, (std::vector<std::size_t>{2000}));
    ASSERT_EQ(restarts_of(*r).size(), 1u);
    EXPECT_EQ(restarts_of(*r)[0]->steps_lost, 0);
  }
}

/// A rank's step counter: `n` records every `interval` steps from a random phase, going back
/// one time in four by 0 to 2 intervals, not always to a step it printed before.
std::vector<std::int64_t> random_counter(std::mt19937& rng, std::int64_t interval, int n) {
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  std::vector<std::int64_t> steps;
  std::int64_t step = interval + pick(0, interval - 1);
  for (; n > 0; --n) {
    steps.push_back(step);
    step =
        pick(0, 3) == 0 ? std::max<std::int64_t>(0, step - pick(0, 2 * interval)) : step + interval;
  }
  return steps;
}

/// A random log of one job: 1 to 3 ranks (or untagged lines) that print the same steps
/// (restarting together) or each their own (other intervals, phases and restarts: a second
/// logger, a lagging rank); neighbours sometimes swapped, the ranks' lines interleaved.
std::string random_log(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int ranks = pick(1, 3);
  const bool tagged = ranks > 1 || pick(0, 1) == 1;
  const bool together = pick(0, 2) == 0;
  auto random_interval = [&] { return std::vector<std::int64_t>{1, 2, 5, 10, 50}[pick(0, 4)]; };
  const std::vector<std::int64_t> job = random_counter(rng, random_interval(), pick(1, 25));
  std::vector<std::vector<Line>> per_rank(ranks);
  for (int r = 0; r < ranks; ++r) {
    const auto steps = together ? job : random_counter(rng, random_interval(), pick(2, 5));
    for (std::int64_t s : steps) per_rank[r].push_back({tagged ? r : -1, s, 0.5 + pick(0, 9)});
    for (std::size_t i = 1; i < per_rank[r].size(); ++i)
      if (pick(0, 9) == 0) std::swap(per_rank[r][i - 1], per_rank[r][i]);
  }
  std::vector<Line> lines;
  std::vector<std::size_t> next(ranks, 0);
  for (bool more = true; more;) {
    more = false;
    for (int r = 0; r < ranks; ++r) {
      if (next[r] < per_rank[r].size() && pick(0, 2) > 0) lines.push_back(per_rank[r][next[r]++]);
      more = more || next[r] < per_rank[r].size();
    }
  }
  return restart_log_of(lines);
}

// 2,000 generated jobs, read, copied and read back: the copy gives the same records in the
// same order and the same restarts, and copying the copy gives the same text. Written without
// the marks, 11 of these copies read back otherwise (the class above: other ranks' steps make
// a restart pass for a swapped line). Whether each restart is where a person would put it is
// the hand-worked tests' question; this one asks that the copy loses nothing.
TEST(RestartMarks, EveryGeneratedJobReadsBackFromItsCopy) {
  std::mt19937 rng(20261206);
  std::size_t with_restarts = 0;
  for (int n = 0; n < 2000; ++n) {
    const std::string text = random_log(rng);
    SCOPED_TRACE(text);
    const mfu::Run run = ingest_text(text, "generated.jsonl");
    with_restarts += run.restarts_at.empty() ? 0 : 1;
    expect_copy_reads_back(run);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(with_restarts, 600u);  // the generator makes the class it is meant to
}

// ---- the analysis counts the restarts ingestion found ------------------------------------

/// The analysis of a run: every record 1 s, no peak needed for restarts and lost steps.
Analysis analysed(const Run& run) {
  AnalyzeOptions o;
  o.peak_flops = 19.5e12;
  return analyze(run, o);
}

double restart_seconds(const Analysis& a) {
  return a.bucket("restart")->seconds;
}

// A stated restart that the job's step counter does not show still restarts the job in the
// analysis: steps 1..5 of 1 s, a mark, then three steps from the resume point. By hand: resumed
// at 6, nothing is redone (0 steps lost, 0 s of restart); at 5, step 5 is redone (1 step, 1 s);
// at 3, steps 3..5 (3 steps, 3 s). One restart each, the wall time 8 s. Before the analysis
// took ingestion's restarts, resuming at 6 or 5 counted no restart and nothing lost (the
// counter does not go back), while ingestion warned of one.
TEST(RestartMarks, TheAnalysisCountsAStatedRestartWhereverItResumes) {
  struct Case {
    std::int64_t resume_at;
    std::int64_t lost;
    const char* warning;  // what ingestion says (the counter went back only when resumed at 3)
  };
  for (const Case c :
       {Case{6, 0, "a restart the input states after step 5 (resumed at 6): nothing redone"},
        Case{5, 1, "step 5 starts again: a restart, 1 iteration(s) redone"},
        Case{3, 3, "the step counter goes back from 5 to 3: a restart, 3 iteration(s) redone"}}) {
    SCOPED_TRACE(c.resume_at);
    std::string text = kMeta;
    for (std::int64_t s = 1; s <= 5; ++s) text += record({-1, s});
    text += kRestart;
    for (std::int64_t s = c.resume_at; s < c.resume_at + 3; ++s) text += record({-1, s});
    const mfu::Run run = ingest_text(text, "stated.jsonl");
    EXPECT_TRUE(test::has_diagnostic(run, c.warning));
    const Analysis a = analysed(run);
    EXPECT_EQ(a.restarts, 1u);
    EXPECT_EQ(a.steps_lost, c.lost);
    EXPECT_DOUBLE_EQ(restart_seconds(a), static_cast<double>(c.lost));
    EXPECT_DOUBLE_EQ(a.wall_time_s, 8.0);
  }
}

/// Writes `text` to a file of this test run's own and returns its path.
/// A job whose ranks all print `steps` (restarting together, each restart stated before the
/// record it stands at), as one file of interleaved lines and as one file per rank.
struct RankedJob {
  std::string one_file;
  std::vector<std::string> per_rank;
};
RankedJob ranked_job(const std::vector<std::int64_t>& steps,
                     const std::vector<std::size_t>& restart_before, int ranks) {
  RankedJob job{kMeta, std::vector<std::string>(static_cast<std::size_t>(ranks), kMeta)};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const bool mark =
        std::find(restart_before.begin(), restart_before.end(), i) != restart_before.end();
    if (mark) job.one_file += kRestart;
    for (int r = 0; r < ranks; ++r) {
      const std::string line = record({r, steps[i]});
      job.one_file += line;
      job.per_rank[static_cast<std::size_t>(r)] += (mark ? kRestart : "") + line;
    }
  }
  return job;
}

/// The job read from its per-rank files merged, and from its one file.
std::pair<Analysis, Analysis> merged_and_one(const RankedJob& job) {
  std::vector<std::string> paths;
  for (std::size_t r = 0; r < job.per_rank.size(); ++r)
    paths.push_back(temp_log(fmt::format("rank{}.jsonl", r), job.per_rank[r]));
  const Run merged = ingest(paths, IngestOptions{});
  for (const auto& p : paths) std::filesystem::remove(p);
  return {analysed(merged), analysed(ingest_text(job.one_file, "one.jsonl"))};
}

// Two ranks' files, each with the restart stated where the job resumed at the step it died in
// (1..5 | 5..7): by hand one restart, step 5 lost (1 step, 1 s), 8 steps of 1 s. The merge
// read each file's restart and then combined the records again, where step 5 twice in a
// stream passed for one step printed twice: no restart, nothing lost, a 7 s wall.
TEST(RestartMarks, MergedRankFilesKeepTheirStatedRestarts) {
  const RankedJob job = ranked_job({1, 2, 3, 4, 5, 5, 6, 7}, {5}, 2);
  const auto [merged, one] = merged_and_one(job);
  for (const Analysis* a : {&merged, &one}) {
    EXPECT_EQ(a->restarts, 1u);
    EXPECT_EQ(a->steps_lost, 1);
    EXPECT_DOUBLE_EQ(restart_seconds(*a), 1.0);
    EXPECT_DOUBLE_EQ(a->wall_time_s, 8.0);
  }
}

// 500 generated jobs of 1 to 3 ranks: 1 to 4 incarnations of 4 to 8 consecutive steps, each
// restart stated and resuming 0 to 3 steps before the step after the last one printed. By
// hand, per restart: resumed at `died + 1 - k` loses k steps (the records after the restored
// step, all in the incarnation before: it has at least 4), so the job loses the sum of the k.
// The one-file reading and the merge of the ranks' files both give those counts and the same
// restart seconds (k s each; every record 1 s, no clock).
TEST(RestartMarks, EveryGeneratedJobHasItsStatedRestartsReadOrMerged) {
  std::mt19937 rng(20261207);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int n = 0; n < 500; ++n) {
    std::vector<std::int64_t> steps;
    std::vector<std::size_t> restart_before;
    std::int64_t lost = 0;
    const int incarnations = pick(1, 4);
    std::int64_t next = 1;
    for (int k = 0; k < incarnations; ++k) {
      if (k > 0) {
        const int back = pick(0, 3);
        lost += back;
        next -= back;
        restart_before.push_back(steps.size());
      }
      for (int s = pick(4, 8); s > 0; --s) steps.push_back(next++);
    }
    const RankedJob job = ranked_job(steps, restart_before, pick(1, 3));
    SCOPED_TRACE(job.one_file);
    const auto [merged, one] = merged_and_one(job);
    for (const Analysis* a : {&merged, &one}) {
      EXPECT_EQ(a->restarts, restart_before.size());
      EXPECT_EQ(a->steps_lost, lost);
      EXPECT_DOUBLE_EQ(restart_seconds(*a), static_cast<double>(lost));
      EXPECT_DOUBLE_EQ(a->wall_time_s, static_cast<double>(steps.size()));
    }
    if (::testing::Test::HasFailure()) return;
  }
}

/// The diagnostics of `run` whose message holds `text`.
std::vector<const Diagnostic*> diagnostics_with(const Run& run, const std::string& text) {
  std::vector<const Diagnostic*> out;
  for (const auto& d : run.diagnostics)
    if (d.message.find(text) != std::string::npos) out.push_back(&d);
  return out;
}

// Two logs of one job that follow each other: the first prints steps 1..7, the second 8, 9,
// 10, then 9, 10, 11 (a restart) or 8, 9, 15, 16 (a jump). By hand the restart stands at the
// second log's line 5 (meta line 1, then 8, 9, 10, 9) and the jump at its line 4 (8, 9, 15).
// Each is warned of once, at that file and line: the merge had named the first log (at the
// second one's line) and repeated the second log's own warning.
TEST(RestartMarks, AMergeWarnsOnceAtTheFileOfARestartOrAJump) {
  std::string first = kMeta;
  for (std::int64_t s = 1; s <= 7; ++s) first += record({-1, s});
  struct Case {
    std::vector<std::int64_t> steps;
    const char* warning;
    std::uint64_t line;
  };
  for (const Case& c : {Case{{8, 9, 10, 9, 10, 11}, "goes back from 10 to 9", 5},
                        Case{{8, 9, 15, 16}, "jumps 1 time(s) (the largest from 9 to 15)", 4}}) {
    SCOPED_TRACE(c.warning);
    std::vector<Line> lines;
    for (const std::int64_t s : c.steps) lines.push_back({-1, s});
    const std::string a = temp_log("first.jsonl", first),
                      b = temp_log("second.jsonl", restart_log_of(lines));
    const mfu::Run merged = ingest({a, b}, IngestOptions{});
    std::filesystem::remove(a);
    std::filesystem::remove(b);
    const auto found = diagnostics_with(merged, c.warning);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0]->file, b);
    EXPECT_EQ(found[0]->line, c.line);
  }
}

}  // namespace
}  // namespace mfu
