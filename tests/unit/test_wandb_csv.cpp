// W&B history and chart CSVs: a generator of runs written in every layout a user downloads
// (history export, pandas' to_csv with its index column, a chart of _runtime, a chart of a
// per-step time), each with its answer by hand, and checked against the same run written as
// wandb-history.jsonl, which the records must match (a second layout of the same rows).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

struct Logged {
  int step;
  double runtime;  // seconds since wandb.init
  double step_time;
  double loss;
};

/// Rows every `every` steps, 2-4 s a step, from a start-up of 30 s.
std::vector<Logged> history(unsigned seed, int rows, int every) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dur(2, 4);
  std::vector<Logged> out;
  double runtime = 30;
  for (int r = 1; r <= rows; ++r) {
    double last = 0;
    for (int k = 0; k < every; ++k) runtime += last = std::round(dur(rng) * 1000) / 1000;
    out.push_back({r * every, runtime, last, 5.0 - r / 100.0});
  }
  return out;
}

std::string as_jsonl(const std::vector<Logged>& h) {
  std::string s;
  for (std::size_t i = 0; i < h.size(); ++i)
    s += fmt::format(
        "{{\"_step\": {}, \"_runtime\": {}, \"_timestamp\": {}, \"trainer/global_step\": {}, "
        "\"train/loss\": {}}}\n",
        i, h[i].runtime, 1.7e9 + h[i].runtime, h[i].step, h[i].loss);
  return s;
}

std::string as_history_csv(const std::vector<Logged>& h, bool pandas_index) {
  std::string s = std::string(pandas_index ? "," : "") +
                  "_step,_runtime,_timestamp,trainer/global_step,train/loss\n";
  for (std::size_t i = 0; i < h.size(); ++i)
    s += fmt::format("{}{},{},{},{},{}\n", pandas_index ? fmt::format("{},", i) : "", i,
                     h[i].runtime, 1.7e9 + h[i].runtime, h[i].step, h[i].loss);
  return s;
}

std::string as_chart_csv(const std::vector<Logged>& h, const std::string& metric, bool time) {
  const std::string run = "smooth-sun-12";
  std::string s = fmt::format(
      "\"Step\",\"{0} - {1}\",\"{0} - {1}__MIN\",\"{0} - {1}__MAX\",\"other-run-3 - {1}\"\n", run,
      metric);
  for (const auto& r : h) {
    const double v = time ? r.step_time : r.runtime;
    s += fmt::format("\"{}\",\"{}\",\"{}\",\"{}\",\"1\"\n", r.step, v, v, v);
  }
  return s;
}

// By hand: row k stands for its `every` steps, timed by (runtime_k - runtime_{k-1}) / every;
// the first row covers steps 1..every from wandb.init (runtime 0), start-up included.
void expect_runtime_records(const std::vector<Logged>& h, int every, const mfu::Run& r) {
  ASSERT_EQ(r.iterations.size(), h.size());
  for (std::size_t i = 0; i < h.size(); ++i) {
    const double before = i ? h[i - 1].runtime : 0;
    EXPECT_EQ(r.iterations[i].step, h[i].step);
    EXPECT_EQ(r.iterations[i].count, static_cast<std::uint32_t>(every)) << i;
    EXPECT_NEAR(r.iterations[i].time_s, (h[i].runtime - before) / every, 1e-9) << i;
  }
}

TEST(WandbCsv, HistoryExportsMatchTheJsonlOfTheSameRows) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    const int every = 1 + static_cast<int>(seed % 3) * 5;
    const auto h = history(seed, 20 + static_cast<int>(seed), every);
    const mfu::Run jsonl = ingest_text(as_jsonl(h), "wandb-history.jsonl");
    ASSERT_EQ(jsonl.format, "wandb-history");
    for (bool pandas : {false, true}) {
      const mfu::Run csv = ingest_text(as_history_csv(h, pandas), "history.csv");
      ASSERT_EQ(csv.format, "wandb-csv");
      expect_runtime_records(h, every, csv);
      ASSERT_EQ(csv.iterations.size(), jsonl.iterations.size());
      for (std::size_t i = 0; i < csv.iterations.size(); ++i) {
        EXPECT_DOUBLE_EQ(csv.iterations[i].time_s, jsonl.iterations[i].time_s);
        EXPECT_FLOAT_EQ(csv.iterations[i].loss, jsonl.iterations[i].loss);
      }
      // The clock starts at wandb.init: the first _timestamp less its _runtime.
      EXPECT_NEAR(csv.first_timestamp_s, 1.7e9, 1e-3);
    }
  }
}

TEST(WandbCsv, AChartOfRuntimeTimesEachPoint) {
  const auto h = history(7, 25, 10);
  const mfu::Run r = ingest_text(as_chart_csv(h, "_runtime", false), "chart.csv");
  ASSERT_EQ(r.format, "wandb-csv");
  expect_runtime_records(h, 10, r);
  EXPECT_EQ(r.meta.text("wandb_run").value_or(""), "smooth-sun-12");
  EXPECT_TRUE(test::has_diagnostic(r, "only 'smooth-sun-12' is read"));
}

// A chart of a per-step time ("perf/step_time", the last step's seconds): each point is timed
// by the value it plots, not by the gap between points.
TEST(WandbCsv, AChartOfStepTimeTimesByTheValue) {
  const auto h = history(8, 25, 1);
  const mfu::Run r = ingest_text(as_chart_csv(h, "perf/step_time", true), "chart.csv");
  ASSERT_EQ(r.format, "wandb-csv");
  ASSERT_EQ(r.iterations.size(), h.size());
  for (std::size_t i = 0; i < h.size(); ++i)
    EXPECT_NEAR(r.iterations[i].time_s, h[i].step_time, 1e-9) << i;
}

// The check can fail: a chart of the loss gives records but no time at all.
TEST(WandbCsv, AChartOfTheLossIsUntimed) {
  const auto h = history(9, 10, 1);
  std::string s = "\"Step\",\"smooth-sun-12 - train/loss\"\n";
  for (const auto& row : h) s += fmt::format("\"{}\",\"{}\"\n", row.step, row.loss);
  const mfu::Run r = ingest_text(s, "chart.csv");
  ASSERT_EQ(r.format, "wandb-csv");
  for (std::size_t i = 0; i < r.iterations.size(); ++i) EXPECT_FALSE(known(r.iterations[i].time_s));
}

}  // namespace
}  // namespace mfu
