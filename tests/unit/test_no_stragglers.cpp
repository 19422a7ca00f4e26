// Issue 19: the straggler-free what-if on a generated 4-rank trace with one late rank (the
// right answer by hand in generators/straggler_traces.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "generators/straggler_traces.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "mfu/trace.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

namespace fs = std::filesystem;

fs::path write_ranks(bool with_late_rank = true) {
  const fs::path dir = fs::temp_directory_path() / ("mfu-stragglers-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (int r = 0; r < 4; ++r)
    test::write_file(dir / fmt::format("rank{}.json", r),
                     test::straggler_rank_trace(r, with_late_rank && r == 3));
  return dir;
}

TEST(NoStragglers, TheProjectedStepIsTheStragglerFreeOne) {
  const fs::path dir = write_ranks();
  const mfu::Run run = ingest({dir.string()});
  ASSERT_TRUE(run.trace);
  ASSERT_EQ(run.trace->ranks.size(), 4u);
  const StragglerProjection p = project_no_stragglers(*run.trace);
  EXPECT_EQ(p.matched_collectives, 6u);
  ASSERT_EQ(p.steps.size(), 3u);
  for (const auto& s : p.steps) {
    EXPECT_NEAR(s.now_s, 1.0, 1e-9) << s.step;
    EXPECT_NEAR(s.projected_s, 0.85, 1e-9) << s.step;
  }
  EXPECT_NEAR(p.projected_s, 0.85, 1e-9);
  ASSERT_EQ(p.costs.size(), 1u);
  EXPECT_EQ(p.costs[0].rank, 3);
  EXPECT_NEAR(p.costs[0].seconds, 0.45, 1e-9);
  EXPECT_EQ(p.costs[0].collectives, 6u);
  fs::remove_all(dir);
}

// Perturbed: with every rank on time nothing is saved (the check above can fail).
TEST(NoStragglers, RanksOnTimeSaveNothing) {
  const fs::path dir = write_ranks(false);
  const StragglerProjection p = project_no_stragglers(*ingest({dir.string()}).trace);
  EXPECT_NEAR(p.projected_s, p.now_s, 1e-12);
  EXPECT_TRUE(p.costs.empty());
  fs::remove_all(dir);
}

TEST(NoStragglers, TheCliPrintsBothStepTimesAndTheCostlyRank) {
  const fs::path dir = write_ranks();
  const auto r = test::run_mfu("whatif " + dir.string() + " --no-stragglers --output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["step_time_s"]["now"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(j["step_time_s"]["projected"].get<double>(), 0.85, 1e-9);
  EXPECT_EQ(j["ranks"][0]["rank"], 3);
  const auto text = test::run_mfu("whatif " + dir.string() + " --no-stragglers");
  EXPECT_NE(text.out.find("1.000 s now, 850 ms without stragglers (-15.0%)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("rank 3: 450 ms"), std::string::npos) << text.out;
  // One rank's trace, or a log, cannot answer it.
  const auto one = test::run_mfu("whatif " + (dir / "rank0.json").string() + " --no-stragglers");
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("at least two ranks"), std::string::npos) << one.err;
  const auto log = test::run_mfu(
      "whatif examples/megatron-deepspeed_gpt3-125m_8gpu.log --gpu a100 --no-stragglers");
  EXPECT_EQ(log.exit_code, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// Per-step trace tables in every renderer: each step's row per rank, and rank 3 last at both
// all-reduces of every step.
TEST(TraceTables, PerStepAndRankInEveryRenderer) {
  const fs::path dir = write_ranks();
  const auto json = test::run_mfu("analyze " + dir.string() + " --peak 989.5T --output json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  for (const auto& r : j["trace"]["ranks"])
    for (const auto& s : r["per_step"])
      EXPECT_EQ(s["arrived_last"].get<int>(), r["rank"] == 3 ? 2 : 0) << r["rank"];
  const auto text = test::run_mfu("analyze " + dir.string() + " --peak 989.5T");
  EXPECT_NE(text.out.find("per step:"), std::string::npos) << text.out;
  const auto md = test::run_mfu("analyze " + dir.string() + " --peak 989.5T --output markdown");
  EXPECT_NE(md.out.find("| step | rank | time |"), std::string::npos) << md.out;
  const auto html = test::run_mfu("analyze " + dir.string() + " --peak 989.5T --output html");
  EXPECT_NE(html.out.find("id=\"rank_steps\""), std::string::npos);
  // 3 steps x 4 ranks.
  std::size_t rows = 0;
  for (auto p = md.out.find("\n| 1 |"); p != std::string::npos; p = md.out.find("\n| ", p + 1))
    ++rows;
  EXPECT_GE(rows, 12u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mfu
