// Logs as users have them: several ranks in one file, per-rank files, restarts, micro-batch
// lines, swapped lines, resumed pieces and conflicting metadata. Each case is generated, and
// its right answer is worked out by hand in the comment above it.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/gate.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

namespace fs = std::filesystem;
constexpr double kNoTime = std::numeric_limits<double>::quiet_NaN();
constexpr double kT0 = 1714521600;  // 2024-05-01 00:00:00 UTC

struct Rec {
  std::int32_t rank = -1;  // printed as a "[rankN]: " prefix when >= 0
  std::int64_t step = 0;
  double time_s = 1.0;
  double timestamp_s = kNoTime;
  double tokens = 4096;
};

std::string meta_line(int gpus, const char* extra = "") {
  return fmt::format(
      R"({{"type":"meta","gpu":"h100-sxm","gpus":{},"dtype":"bf16","seq_len":4096{}}})"
      "\n",
      gpus, extra);
}

std::string record_line(const Rec& r) {
  std::string line = r.rank >= 0 ? fmt::format("[rank{}]: ", r.rank) : std::string();
  line += fmt::format(R"({{"step":{},"time_s":{},"model_flops":1e15,"tokens":{})", r.step, r.time_s,
                      r.tokens);
  if (!std::isnan(r.timestamp_s)) line += fmt::format(R"(,"timestamp":{:.3f})", r.timestamp_s);
  return line + "}\n";
}

std::string log_of(const std::vector<Rec>& recs, int gpus = 8) {
  std::string text = meta_line(gpus);
  for (const auto& r : recs) text += record_line(r);
  return text;
}

std::size_t restart_events(const Run& run) {
  std::size_t n = 0;
  for (const auto& e : run.events) n += e.kind == EventKind::kRestart ? 1 : 0;
  return n;
}

/// A scratch directory removed at the end of the test.
struct Dir {
  fs::path path;
  explicit Dir(const std::string& name)
      : path(fs::temp_directory_path() / fmt::format("mfu_{}_{}", name, ::getpid())) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

// Four ranks in one file; rank 3 prints each step one step after the others (its line for
// step s comes after the others' lines for step s+1) and rank 2 is slower (1.2 s). By hand:
// 50 steps, no restart (each rank's own counter only goes up), each step's time is the
// slowest rank's 1.2 s, so the records add up to 50 x 1.2 = 60 s; rank 2 set all 50 steps.
TEST(RankStreams, ALaggingRankIsNotARestart) {
  std::vector<Rec> recs;
  for (std::int64_t s = 1; s <= 51; ++s) {
    for (std::int32_t r = 0; r < 3 && s <= 50; ++r) recs.push_back({r, s, r == 2 ? 1.2 : 1.0});
    if (s >= 2) recs.push_back({3, s - 1, 1.0});
  }
  const mfu::Run run = ingest_text(log_of(recs, 4), "lag.jsonl");
  ASSERT_EQ(run.iterations.size(), 50u);
  EXPECT_EQ(restart_events(run), 0u);
  double total = 0;
  for (std::size_t i = 0; i < run.iterations.size(); ++i) total += run.iterations[i].time_s;
  EXPECT_NEAR(total, 60.0, 1e-9);
  ASSERT_EQ(run.rank_streams.size(), 4u);
  EXPECT_EQ(run.rank_streams[2].rank, 2);
  EXPECT_EQ(run.rank_streams[2].slowest_steps, 50u);
  EXPECT_EQ(run.rank_streams[0].slowest_steps, 0u);
  const Analysis a = analyze(run, {});
  EXPECT_EQ(a.restarts, 0u);
  EXPECT_NEAR(a.wall_time_s, 60.0, 1e-6);
  bool named = false;
  for (const auto& w : a.warnings)
    named = named || w.find("rank 2 set the step time in 50 of 50") != std::string::npos;
  EXPECT_TRUE(named);
}

// Two per-rank files; each rank ran steps 1..20, died, and resumed from the checkpoint of
// step 10 (steps 11..30). By hand: one restart, 20 - 10 = 10 steps lost, 20 + 20 = 40 job
// records of 1 s each. Read with and without timestamps (clocks overlap: ranks).
TEST(RankStreams, PerRankFilesEachHoldingARestart) {
  for (const bool dated : {false, true}) {
    SCOPED_TRACE(dated ? "with timestamps" : "without timestamps");
    Dir dir("rank_restart");
    std::vector<std::string> files;
    for (int rank = 0; rank < 2; ++rank) {
      std::vector<Rec> recs;
      double t = kT0;
      for (std::int64_t s = 1; s <= 20; ++s) recs.push_back({-1, s, 1.0, dated ? t += 1 : kNoTime});
      t += 60;  // down for a minute
      for (std::int64_t s = 11; s <= 30; ++s)
        recs.push_back({-1, s, 1.0, dated ? t += 1 : kNoTime});
      files.push_back(dir.write(fmt::format("rank{}.jsonl", rank), log_of(recs, 2)));
    }
    const mfu::Run run = ingest(files);
    EXPECT_EQ(run.iterations.size(), 40u);
    EXPECT_EQ(restart_events(run), 1u);
    const Analysis a = analyze(run, {});
    EXPECT_EQ(a.restarts, 1u);
    EXPECT_EQ(a.steps_lost, 10);
    ASSERT_EQ(run.rank_streams.size(), 2u);
    EXPECT_EQ(run.rank_streams[0].restarts, 1u);
  }
}

// The same file given twice (or a copy of it): its records and timestamps agree to the digit,
// which two ranks' never do. By hand: a warning names the first file; read as two ranks, every
// step time stays the same (1 s, 20 steps). Two ranks whose clocks differ by a millisecond get
// no such warning. (The fingerprints are taken before the records move into the merged run.)
TEST(RankStreams, TheSameLogTwiceIsNamedAsACopy) {
  for (const bool copy : {true, false}) {
    SCOPED_TRACE(copy ? "a copy" : "two ranks");
    Dir dir("copy_of_log");
    std::vector<std::string> files;
    for (int rank = 0; rank < 2; ++rank) {
      std::vector<Rec> recs;
      double t = kT0 + (copy ? 0 : 0.001 * rank);
      for (std::int64_t s = 1; s <= 20; ++s) recs.push_back({-1, s, 1.0, t += 1});
      files.push_back(dir.write(fmt::format("rank{}.jsonl", rank), log_of(recs, 2)));
    }
    const mfu::Run run = ingest(files);
    bool named = false;
    for (const auto& d : run.diagnostics)
      named = named || (d.message.find("a copy of one log?") != std::string::npos &&
                        d.message.find("rank0.jsonl") != std::string::npos);
    EXPECT_EQ(named, copy);
    ASSERT_EQ(run.iterations.size(), 20u);
    for (std::size_t i = 0; i < 20; ++i) EXPECT_EQ(run.iterations[i].time_s, 1.0);
  }
}

// Per-rank files large enough that their records move into the job's table (65,536 records
// and more) beside one small enough to be copied: ranks 0 and 1 ran steps 1..70,000, rank 1
// taking 1.5 s on even steps and 1.0 s on odd ones, rank 0 always 1.0 s; rank 2's file holds
// steps 1..100 at 2.0 s. By hand: 70,000 job steps; 35,000 x 1.5 + 35,000 x 1.0 = 87,500 s,
// plus steps 1..100 at rank 2's 2.0 s instead: 50 x 0.5 + 50 x 1.0 = 75 s more, 87,575 s.
// Rank 2 set steps 1..100, rank 1 the other 34,950 even ones, rank 0 (first of equal times)
// the other 34,950 odd ones.
TEST(RankStreams, LargePerRankFilesMoveIntoTheJobAsSmallOnesAreCopied) {
  Dir dir("large_ranks");
  std::vector<std::string> files;
  for (int rank = 0; rank < 3; ++rank) {
    std::string text = meta_line(3);
    const std::int64_t steps = rank == 2 ? 100 : 70000;
    for (std::int64_t s = 1; s <= steps; ++s) {
      const double t = rank == 2 ? 2.0 : rank == 1 && s % 2 == 0 ? 1.5 : 1.0;
      text += fmt::format(R"({{"step":{},"time_s":{},"tokens":4096}})"
                          "\n",
                          s, t);
    }
    files.push_back(dir.write(fmt::format("rank{}.jsonl", rank), text));
  }
  const mfu::Run run = ingest(files);
  ASSERT_EQ(run.iterations.size(), 70000u);
  EXPECT_DOUBLE_EQ(test::timed_seconds(run), 87575.0);
  ASSERT_EQ(run.rank_streams.size(), 3u);
  EXPECT_EQ(run.rank_streams[0].slowest_steps, 34950u);
  EXPECT_EQ(run.rank_streams[1].slowest_steps, 34950u);
  EXPECT_EQ(run.rank_streams[2].slowest_steps, 100u);
  EXPECT_EQ(run.rank_streams[1].records, 70000u);
}

// Eight ranks print their startup timer (30 + rank seconds) once. By hand: the job started
// once; its startup is the slowest rank's 37 s, not 8 x 30 + 28 = 268 s.
TEST(RankStreams, StartupCountsOncePerIncarnation) {
  std::string text = meta_line(8);
  for (int r = 0; r < 8; ++r)
    text += fmt::format(
        "[rank{}]: {{\"type\":\"event\",\"kind\":\"startup\",\"step\":0,"
        "\"duration_s\":{}}}\n",
        r, 30 + r);
  for (std::int64_t s = 1; s <= 20; ++s)
    for (int r = 0; r < 8; ++r) text += record_line({r, s, 1.0});
  const mfu::Run run = ingest_text(text, "startup.jsonl");
  std::vector<double> startups;
  for (const auto& e : run.events)
    if (e.kind == EventKind::kStartup) startups.push_back(e.duration_s);
  ASSERT_EQ(startups.size(), 1u);
  EXPECT_DOUBLE_EQ(startups.front(), 37.0);
  EXPECT_EQ(run.iterations.size(), 20u);
}

// 16 ranks print every step but the metadata says 8 GPUs. By hand: with one GPU per rank
// the job had 16 GPUs and the stated count doubles MFU; check must not pass it. With 8 ranks
// (or the count given by the user) there is nothing to say: the check can fail both ways.
TEST(RankStreams, MoreRanksThanGpusIsAWarningAndCannotBeJudged) {
  auto run_with = [](int ranks) {
    std::vector<Rec> recs;
    for (std::int64_t s = 1; s <= 30; ++s)
      for (std::int32_t r = 0; r < ranks; ++r) recs.push_back({r, s, 1.0});
    return ingest_text(log_of(recs, 8), "ranks.jsonl");
  };
  GateOptions g;
  g.min_mfu = 0.01;
  g.min_steady_steps = 5;
  {
    const mfu::Run run = run_with(16);
    const Analysis a = analyze(run, {});
    EXPECT_NE(a.gpu_count_conflict.find("16 distinct ranks"), std::string::npos);
    const GateResult r = evaluate_gate(a, run, g);
    EXPECT_FALSE(r.passed);
    EXPECT_FALSE(r.cannot_judge.empty());
    AnalyzeOptions given;
    given.gpus = 8;  // the user says so: warned, but judged
    const Analysis b = analyze(run, given);
    EXPECT_TRUE(b.gpu_count_conflict.empty());
    EXPECT_TRUE(evaluate_gate(b, run, g).cannot_judge.empty());
  }
  const mfu::Run fits = run_with(8);
  const Analysis a = analyze(fits, {});
  EXPECT_TRUE(a.gpu_count_conflict.empty());
  EXPECT_TRUE(evaluate_gate(a, fits, g).passed);
}

// Gradient accumulation printing one line per micro-batch: 4 lines of 0.25 s and 1024 tokens
// per step. By hand: a step is 4 x 0.25 = 1.0 s and 4 x 1024 = 4096 tokens. Told apart from
// ranks by the timestamps (they advance by 0.25 s per line) or by the stated grad_accum 4.
TEST(RankStreams, MicroBatchLinesAddUpIntoTheirStep) {
  for (const bool dated : {true, false}) {
    SCOPED_TRACE(dated ? "timestamps" : "grad_accum");
    std::string text = dated ? meta_line(1) : meta_line(1, R"(,"grad_accum":4)");
    double t = kT0;
    for (std::int64_t s = 1; s <= 10; ++s)
      for (int m = 0; m < 4; ++m)
        text += record_line({-1, s, 0.25, dated ? t += 0.25 : kNoTime, 1024});
    const mfu::Run run = ingest_text(text, "accum.jsonl");
    ASSERT_EQ(run.iterations.size(), 10u);
    for (std::size_t i = 0; i < run.iterations.size(); ++i) {
      EXPECT_NEAR(run.iterations[i].time_s, 1.0, 1e-9);
      EXPECT_NEAR(run.iterations[i].tokens, 4096, 1e-9);
    }
  }
  // Without either, repeats are combined as ranks printing the same step (the slowest kept),
  // and the report says so.
  std::string text = meta_line(1);
  for (std::int64_t s = 1; s <= 10; ++s)
    for (int m = 0; m < 4; ++m) text += record_line({-1, s, 0.25 + 0.01 * m, kNoTime, 1024});
  const mfu::Run run = ingest_text(text, "untold.jsonl");
  ASSERT_EQ(run.iterations.size(), 10u);
  EXPECT_NEAR(run.iterations[0].time_s, 0.28, 1e-9);
  bool said = false;
  for (const auto& d : run.diagnostics)
    said = said || d.message.find("other ranks") != std::string::npos;
  EXPECT_TRUE(said);
}

// Buffered writers swap adjacent lines: steps 1..100 with (10,11), (50,51) and (99,100)
// swapped. By hand: 100 steps, no restart, in order. With a logging interval of 10 (steps
// 10..1000) and (200,210) swapped: the same. A true restart back by one interval that does
// not catch up at once (1..50, then 41..60) is still a restart, 50 - 40 = 10 steps lost.
TEST(RankStreams, SwappedLinesAreReorderingNotRestarts) {
  std::vector<Rec> recs;
  for (std::int64_t s = 1; s <= 100; ++s) recs.push_back({-1, s, 1.0});
  for (std::size_t i : {9u, 49u, 98u}) std::swap(recs[i], recs[i + 1]);
  const mfu::Run run = ingest_text(log_of(recs), "swap.jsonl");
  ASSERT_EQ(run.iterations.size(), 100u);
  EXPECT_EQ(restart_events(run), 0u);
  const auto steps = test::steps_of(run);
  EXPECT_TRUE(std::is_sorted(steps.begin(), steps.end()));

  std::vector<Rec> interval;
  for (std::int64_t s = 10; s <= 1000; s += 10) interval.push_back({-1, s, 1.0});
  std::swap(interval[19], interval[20]);  // steps 200 and 210
  const mfu::Run every10 = ingest_text(log_of(interval), "swap10.jsonl");
  EXPECT_EQ(restart_events(every10), 0u);
  EXPECT_EQ(every10.iterations.size(), 100u);

  std::vector<Rec> restart;
  for (std::int64_t s = 1; s <= 50; ++s) restart.push_back({-1, s, 1.0});
  for (std::int64_t s = 41; s <= 60; ++s) restart.push_back({-1, s, 1.0});
  const mfu::Run real = ingest_text(log_of(restart), "restart.jsonl");
  ASSERT_EQ(restart_events(real), 1u);
  EXPECT_EQ(analyze(real, {}).steps_lost, 10);
}

// Two consecutive pieces of one job: steps 1..100 from t0, then, resumed from the checkpoint
// of step 50 after a 15-minute gap, steps 51..150. Their steps overlap by half, but their
// clocks do not: pieces, not ranks. By hand: 1 restart, 100 - 50 = 50 steps lost, 200 records.
TEST(RankStreams, ResumedPiecesAreToldFromRanksByTheirClocks) {
  Dir dir("pieces");
  std::vector<Rec> first, second;
  for (std::int64_t s = 1; s <= 100; ++s) first.push_back({-1, s, 1.0, kT0 + s});
  for (std::int64_t s = 51; s <= 150; ++s) second.push_back({-1, s, 1.0, kT0 + 1000 + s});
  // Given in the wrong order: the clocks order them.
  const mfu::Run run =
      ingest({dir.write("b.jsonl", log_of(second)), dir.write("a.jsonl", log_of(first))});
  EXPECT_EQ(run.iterations.size(), 200u);
  EXPECT_EQ(restart_events(run), 1u);
  EXPECT_EQ(analyze(run, {}).steps_lost, 50);

  // Without clocks, the rank tags tell: both pieces are rank 0's (the same answer), while two
  // logs of ranks 0 and 1 over the same steps are ranks (100 job records, no restart).
  for (auto& r : first) r = {0, r.step, 1.0};
  for (auto& r : second) r = {0, r.step, 1.0};
  const mfu::Run tagged =
      ingest({dir.write("b0.jsonl", log_of(second)), dir.write("a0.jsonl", log_of(first))});
  EXPECT_EQ(restart_events(tagged), 1u);
  EXPECT_EQ(analyze(tagged, {}).steps_lost, 50);
  std::vector<Rec> other = first;
  for (auto& r : other) r.rank = 1;
  const mfu::Run ranks =
      ingest({dir.write("r0.jsonl", log_of(first)), dir.write("r1.jsonl", log_of(other))});
  EXPECT_EQ(ranks.iterations.size(), 100u);
  EXPECT_EQ(restart_events(ranks), 0u);
}

// A native log whose second meta line says 16 GPUs after 8: the first value stands in the
// streaming reader (stdin) and the parallel reader (a large file) alike, with a warning that
// names both lines.
TEST(RankStreams, ConflictingMetaHasOneRuleInEveryReader) {
  std::string text = meta_line(8);
  for (std::int64_t s = 1; s <= 2000; ++s) {
    if (s == 1000) text += meta_line(16);
    text += record_line({-1, s, 1.0});
  }
  Dir dir("meta");
  const std::string path = dir.write("big.jsonl", text);
  IngestOptions parallel;
  parallel.threads = 4;
  parallel.parallel_min_bytes = 1;
  const mfu::Run from_disk = ingest({path}, parallel);
  const mfu::Run from_stdin = ingest_text(text, path);
  for (const mfu::Run* r : {&from_disk, &from_stdin}) {
    EXPECT_EQ(r->meta.number("gpus"), 8);
    bool named = false;
    for (const auto& d : r->diagnostics)
      named = named || (d.message.find("gpus = 16") != std::string::npos &&
                        d.message.find(":1 said 8") != std::string::npos);
    EXPECT_TRUE(named);
  }
  EXPECT_EQ(from_disk.iterations.size(), from_stdin.iterations.size());
}

// Two logs of different jobs (8 and 16 GPUs) are refused, naming the difference; asked to,
// mfu merges them with a warning.
TEST(RankStreams, InputsOfDifferentJobsAreRefused) {
  Dir dir("jobs");
  std::vector<Rec> recs;
  for (std::int64_t s = 1; s <= 10; ++s) recs.push_back({-1, s, 1.0});
  const std::vector<std::string> files = {dir.write("a.jsonl", log_of(recs, 8)),
                                          dir.write("b.jsonl", log_of(recs, 16))};
  try {
    (void)ingest(files);
    ADD_FAILURE() << "merged two different jobs";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gpus: 8"), std::string::npos) << e.what();
  }
  IngestOptions force;
  force.force_merge = true;
  const mfu::Run merged = ingest(files, force);
  bool warned = false;
  for (const auto& d : merged.diagnostics)
    warned = warned || d.message.find("merged as asked") != std::string::npos;
  EXPECT_TRUE(warned);
}

// Megatron-LM CI layout: <case>__golden_values_*.json beside <case>__model_config.yaml, whose
// METRICS list names "iteration-time" too. By hand: one case gives a run with that case's
// shape (hidden 6144 from a's config); two cases of different shapes in one directory are two
// jobs (hidden 6144 against 4096), refused; neither config is read as a golden-values file.
TEST(RankStreams, ModelConfigsGoWithTheirOwnGoldenValues) {
  const std::string golden = test::read_file(test::test_data("megatron_golden_excerpt.json"));
  auto config = [](int hidden) {
    return fmt::format(
        "MODEL_ARGS:\n  --num-layers: 32\n  --hidden-size: {}\n  --num-attention-heads: 32\n"
        "METRICS:\n  - \"iteration-time\"\n  - \"lm loss\"\n",
        hidden);
  };
  Dir one("golden_one");
  const std::string a = one.write("a__golden_values_dev_dgx_h100.json", golden);
  one.write("a__model_config.yaml", config(6144));
  const mfu::Run run = ingest({one.path.string()});
  EXPECT_EQ(run.format, "megatron-golden");
  EXPECT_EQ(run.meta.number("hidden").value_or(0), 6144);
  for (const auto& d : run.diagnostics)
    EXPECT_EQ(d.message.find("golden-values"), std::string::npos) << d.message;
  Dir two("golden_two");
  two.write("a__golden_values_dev_dgx_h100.json", golden);
  two.write("a__model_config.yaml", config(6144));
  two.write("b__golden_values_dev_dgx_h100.json", golden);
  two.write("b__model_config.yaml", config(4096));
  try {
    (void)ingest({two.path.string()});
    ADD_FAILURE() << "two CI cases merged as one job";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hidden: 6144"), std::string::npos) << e.what();
  }
}

// Two MLPerf results of one system, one of them another benchmark (its submission_benchmark
// says bert): two jobs, refused; the same benchmark twice is one job's two runs, read.
TEST(RankStreams, MlperfResultsOfDifferentBenchmarksAreRefused) {
  const std::string lora = test::read_file(test::test_data("mlperf_llama2_lora_h200.txt"));
  std::string bert = lora;
  const std::string name = "\"value\": \"llama2_70b_lora\"";
  bert.replace(bert.find(name), name.size(), "\"value\": \"bert\"");
  Dir dir("mlperf_two");
  dir.write("x_llama2_70b_lora_result_0.txt", lora);
  dir.write("x_bert_result_0.txt", bert);
  try {
    (void)ingest({dir.path.string()});
    ADD_FAILURE() << "two benchmarks merged as one job";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("benchmark"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// Hugging Face Trainer console: one loss dict every 500 steps (logging_steps), a tqdm bar
// redrawn every 10 steps at 2.13 it/s, an evaluation bar of its own at step 2500, 5490 steps.
// By hand: the dicts stand for steps 500, 1000, ..., 5000 (the bar's counter), 500 steps each
// (5000 in all), and each step took 1 / 2.13 = 0.4695 s (the bar's elapsed time between dicts
// over 500 steps; tqdm prints whole seconds, so within 2 s / 500 = 0.004 s). The old reading
// was "10 iterations of 4 min".
std::string hf_console() {
  auto clock = [](double t) {
    const int s = static_cast<int>(t);
    return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                     : fmt::format("{:02}:{:02}", s / 60, s % 60);
  };
  const double per_step = 1 / 2.13;
  std::string text;
  for (int n = 10; n <= 5490; n += 10) {
    text += fmt::format(" {:3}%|#####     | {}/5490 [{}<{},  2.13it/s]\r", 100 * n / 5490, n,
                        clock(n * per_step), clock((5490 - n) * per_step));
    if (n % 500 == 0)
      text += fmt::format(
          "\n{{'loss': {:.4f}, 'grad_norm': 1.5, 'learning_rate': 4e-05, "
          "'epoch': {:.2f}}}\n",
          2.0 - n / 10000.0, n / 5490.0);
    if (n == 2500) {
      for (int k = 1; k <= 50; ++k)
        text += fmt::format("{}%|##| {}/50 [00:0{}<00:05, 9.1it/s]\r", 2 * k, k, k / 10);
      text += "\n{'eval_loss': 1.9, 'eval_runtime': 5.5, 'epoch': 0.46}\n";
    }
  }
  text += fmt::format(
      "\n{{'train_runtime': {:.1f}, 'train_steps_per_second': 2.13, "
      "'train_loss': 1.8, 'epoch': 1.0}}\n",
      5490 * per_step + 5.5);
  return text;
}

TEST(LoggingIntervals, HuggingFaceDictsTakeTheProgressBarsStepsAndTime) {
  const mfu::Run run = ingest_text(hf_console(), "hf.log");
  EXPECT_EQ(run.format, "hf-trainer");
  ASSERT_EQ(run.iterations.size(), 10u);
  std::uint64_t iterations = 0;
  for (std::size_t i = 0; i < run.iterations.size(); ++i) {
    const Iteration it = run.iterations[i];
    EXPECT_EQ(it.step, 500 * static_cast<std::int64_t>(i + 1));
    EXPECT_NEAR(it.time_s, 1 / 2.13, 0.004) << "record " << i;
    iterations += it.count;
  }
  EXPECT_EQ(iterations, 5000u);
}

// A real TRL GRPO console (../shared/samples-next/hf_trainer, PROVENANCE.md): the bar says
// 10/29790 at 01:29 and 499/29790 at 29:32; 49 dicts. By hand: the first dict stands for steps
// 1..10 at 89 s / 10 = 8.9 s per step, and the records cover about 29 minutes.
TEST(LoggingIntervals, RealTrlConsoleIsTimedByItsBar) {
  const auto dir = test::samples_next_dir();
  if (dir.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next is absent");
  const mfu::Run run = ingest(
      {(dir / "hf_trainer" / "JuncyLu_trl_DAPO_trl_grpo_qwen25vl3b_run_terminal.md").string()});
  ASSERT_EQ(run.iterations.size(), 49u);
  EXPECT_EQ(run.iterations[0].step, 10);
  EXPECT_NEAR(run.iterations[0].time_s, 8.9, 0.1);
  double total = 0;
  for (std::size_t i = 0; i < run.iterations.size(); ++i)
    total += run.iterations[i].time_s * run.iterations[i].count;
  EXPECT_GT(total, 28 * 60.0);
  EXPECT_LT(total, 29.6 * 60.0);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// nanoGPT with log_interval 10 and eval_interval 100: each "iter N" line is the time of the one
// iteration N; iteration 0 took 20 s (compilation), the others 0.5 s, and an iteration that ran
// an evaluation first took 35 s. By hand: 101 records; iteration 0 stands for itself (20 s),
// the 100 others for 10 iterations of 0.5 s (500 s); the 10 evaluations after step 0 took
// 35 - 0.5 = 34.5 s each (345 s), not 10 x 35 s per interval. Wall time 20 + 500 + 345 = 865 s.
TEST(LoggingIntervals, NanoGptSampleAfterAnEvaluationIsNotMultipliedByTheInterval) {
  std::string text;
  for (int n = 0; n <= 1000; n += 10) {
    if (n % 100 == 0) text += fmt::format("step {}: train loss 3.1000, val loss 3.2000\n", n);
    const double ms = n == 0 ? 20000.0 : n % 100 == 0 ? 35000.0 : 500.0;
    text += fmt::format("iter {}: loss 3.1000, time {:.2f}ms, mfu 30.00%\n", n, ms);
  }
  const mfu::Run run = ingest_text(text, "nanogpt.log");
  ASSERT_EQ(run.iterations.size(), 101u);
  for (std::size_t i = 1; i < run.iterations.size(); ++i)
    EXPECT_NEAR(run.iterations[i].time_s, 0.5, 1e-9) << "record " << i;
  double eval_s = 0;
  for (const auto& e : run.events)
    if (e.kind == EventKind::kEval && known(e.duration_s)) eval_s += e.duration_s;
  EXPECT_NEAR(eval_s, 345.0, 1e-6);
  AnalyzeOptions o;
  o.gpu = "a100-sxm4-80gb";
  o.gpus = 1;
  EXPECT_NEAR(analyze(run, o).wall_time_s, 865.0, 1e-6);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// A Megatron log holding two jobs' argument blocks (12 layers, then 24, as after a restart with
// a new config), each followed by many iteration lines: the streaming reader and the parallel
// reader (4 pieces) keep the same value (Megatron's later block replaces the earlier one).
TEST(RankStreams, MegatronArgumentsResolveAlikeInEveryReader) {
  const std::string one = test::read_file(test::test_data("megatron_megads_excerpt.log"));
  std::string two = one;
  const std::size_t at = two.find("num_layers ...................................... 12");
  ASSERT_NE(at, std::string::npos);
  two.replace(at, 52, "num_layers ...................................... 24");
  std::string text;
  for (int k = 0; k < 200; ++k) text += one;  // big enough to be cut into pieces
  for (int k = 0; k < 200; ++k) text += two;
  Dir dir("megatron_meta");
  const std::string path = dir.write("two_jobs.log", text);
  IngestOptions parallel;
  parallel.threads = 4;
  parallel.parallel_min_bytes = 1;
  bool pieces = false;
  parallel.on_progress = [&](const std::string& m) {
    pieces = pieces || m.find("pieces") != std::string::npos;
  };
  const mfu::Run from_disk = ingest({path}, parallel);
  const mfu::Run streamed = ingest_text(text, path);
  EXPECT_TRUE(pieces);
  EXPECT_EQ(streamed.meta.number("layers"), 24);
  EXPECT_EQ(from_disk.meta.number("layers"), streamed.meta.number("layers"));
  EXPECT_EQ(from_disk.iterations.size(), streamed.iterations.size());
}

}  // namespace
}  // namespace mfu
