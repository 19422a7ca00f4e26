// Issue 19: a plain log plus a short profiler trace of the same job. The trace's steps split
// the time the log cannot attribute; a trace of another run is refused with the difference.
#include <gtest/gtest.h>

#include <filesystem>

#include "generators/log_trace_pair.hpp"
#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

namespace fs = std::filesystem;

fs::path write_pair(const std::string& log, const std::string& trace) {
  const fs::path dir = fs::temp_directory_path() / ("mfu-pair-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  test::write_file(dir / "run.jsonl", log);
  test::write_file(dir / "trace.json", trace);
  return dir;
}

Analysis analyze_pair(const fs::path& dir) {
  const mfu::Run run = ingest({(dir / "run.jsonl").string(), (dir / "trace.json").string()});
  return analyze(run, AnalyzeOptions{});
}

double seconds_of(const Analysis& a, BucketId id) {
  const Bucket* b = a.bucket(id);
  return b ? b->seconds : 0.0;
}

// The right split by hand is in generators/log_trace_pair.hpp: of the 24 s the log leaves
// unattributed, below peak 6 s, communication 6 s, copies 2 s, idle 10 s.
TEST(LogTraceCalibration, GeneratedPairGivesTheKnownSplit) {
  const fs::path dir = write_pair(test::pair_log(), test::pair_trace());
  const Analysis alone = analyze(ingest({(dir / "run.jsonl").string()}), AnalyzeOptions{});
  ASSERT_NEAR(seconds_of(alone, BucketId::kOther), 24.0, 1e-6);
  const Analysis a = analyze_pair(dir);
  EXPECT_NEAR(a.wall_time_s, 40.0, 1e-9);
  EXPECT_NEAR(seconds_of(a, BucketId::kCompute), 16.0, 0.01 * 16);
  EXPECT_NEAR(seconds_of(a, BucketId::kInefficiency), 6.0, 0.01 * 6);
  EXPECT_NEAR(seconds_of(a, BucketId::kComm), 6.0, 0.01 * 6);
  EXPECT_NEAR(seconds_of(a, BucketId::kIo), 2.0, 0.01 * 2);
  EXPECT_NEAR(seconds_of(a, BucketId::kIdle), 10.0, 0.01 * 10);
  EXPECT_NEAR(seconds_of(a, BucketId::kOther), 0.0, 1e-6);
  // Each part says where it came from, and the steady split whatif scales follows.
  const Bucket* comm = a.bucket(BucketId::kComm);
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->source, BucketSource::kInferred);
  EXPECT_NE(comm->detail.find("inferred from trace steps 10-13"), std::string::npos)
      << comm->detail;
  EXPECT_NEAR(a.steady_step_split_s.at("comm"), 0.15, 0.0015);
  EXPECT_EQ(a.steady_step_split_s.count("other"), 0u);
  // The fix list now ranks real causes; nothing asks to attribute what is attributed.
  ASSERT_FALSE(a.fixes.empty());
  EXPECT_EQ(a.fixes.front().bucket, "idle");
  EXPECT_TRUE(a.attribution_hint.empty()) << a.attribution_hint;
  fs::remove_all(dir);
}

// A traced step 20% slower than the log's (the profiler's overhead, inside the 35% allowed):
// every part stretches alike, and the ideal is taken as the same 40% of the traced step (0.48
// of 1.2 s), so the shares, and the split, are those of the unstretched pair: 6, 6, 2, 10.
TEST(LogTraceCalibration, AUniformlySlowerTraceKeepsItsShares) {
  const fs::path dir =
      write_pair(test::pair_log(), test::pair_trace("NVIDIA H100 80GB HBM3", 8, 10, 1.2));
  const Analysis a = analyze_pair(dir);
  EXPECT_NEAR(seconds_of(a, BucketId::kInefficiency), 6.0, 0.01 * 6);
  EXPECT_NEAR(seconds_of(a, BucketId::kComm), 6.0, 0.01 * 6);
  EXPECT_NEAR(seconds_of(a, BucketId::kIo), 2.0, 0.01 * 2);
  EXPECT_NEAR(seconds_of(a, BucketId::kIdle), 10.0, 0.01 * 10);
  fs::remove_all(dir);
}

// Perturbed log: with 2 s steps the ideal is 20% of a step (0.4 of 2 s), and 64 s are
// unattributed. The same trace then has, above 20% of each traced second: below peak 0.35,
// communication 0.15, copies 0.05, host-bound 0.05, device idle 0.20 (0.80 s). 64 s split:
// 28, 12, 4, 4 + 16 = 20. The check fires on a split that does not follow the log.
TEST(LogTraceCalibration, TheSplitFollowsTheLogsIdealFraction) {
  const fs::path dir = write_pair(test::pair_log(2.0), test::pair_trace());
  // 2 s steps against 1 s traced ones are 50% apart: refused ...
  EXPECT_THROW((void)analyze_pair(dir), Error);
  // ... so the trace is stretched to match (1.6 s, 20% apart) and keeps its 20% ideal share.
  test::write_file(dir / "trace.json", test::pair_trace("NVIDIA H100 80GB HBM3", 8, 10, 1.6));
  const Analysis a = analyze_pair(dir);
  ASSERT_NEAR(a.wall_time_s, 80.0, 1e-9);
  EXPECT_NEAR(seconds_of(a, BucketId::kInefficiency), 28.0, 0.01 * 28);
  EXPECT_NEAR(seconds_of(a, BucketId::kComm), 12.0, 0.01 * 12);
  EXPECT_NEAR(seconds_of(a, BucketId::kIo), 4.0, 0.01 * 4);
  EXPECT_NEAR(seconds_of(a, BucketId::kIdle), 20.0, 0.01 * 20);
  fs::remove_all(dir);
}

TEST(LogTraceCalibration, ATraceOfAnotherRunIsRefusedWithTheDifference) {
  struct Case {
    std::string trace;
    const char* says;
  };
  const Case cases[] = {
      {test::pair_trace("NVIDIA A100-SXM4-80GB"), "ran on NVIDIA A100-SXM4-80GB"},
      {test::pair_trace("NVIDIA H100 80GB HBM3", 16), "world size is 16"},
      {test::pair_trace("NVIDIA H100 80GB HBM3", 8, 500), "outside the log's steps 1-40"},
      {test::pair_trace("NVIDIA H100 80GB HBM3", 8, 10, 2.0), "more than 35% apart"},
  };
  for (const auto& c : cases) {
    const fs::path dir = write_pair(test::pair_log(), c.trace);
    try {
      (void)analyze_pair(dir);
      ADD_FAILURE() << "accepted a trace that " << c.says;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not of this run"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
    }
    fs::remove_all(dir);
  }
}

// The CLI: exit 2 with the reason, for the bundled Megatron example (8 x A100) with the H100
// trace of another job.
TEST(LogTraceCalibration, TheCliRefusesAnUnrelatedTraceWithExit2) {
  const fs::path dir = write_pair(test::pair_log(), test::pair_trace());
  const auto r = test::run_mfu("analyze examples/megatron-deepspeed_gpt3-125m_8gpu.log " +
                               (dir / "trace.json").string() + " --gpu a100");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("not of this run"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mfu
