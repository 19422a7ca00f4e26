// `mfu convert` promises a native copy that reads back as the run it came from. The check
// here is the analysis, not the records alone: the analysis of every excerpt and every real
// sample equals the analysis of its native copy (the first reading and the copy's reading are
// two code paths). The copy must so keep what the analysis reads beyond the records: where
// each event stood among them (a checkpoint load before the first record is startup, after it
// a restart) and the time the log covers (startup runs from its first line, not its first
// record).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> every_input() {
  std::vector<fs::path> files;
  for (const fs::path& dir :
       {test::source_dir() / "tests" / "data", test::samples_dir(), test::samples_next_dir()}) {
    if (dir.empty()) continue;
    for (const auto& f : fs::recursive_directory_iterator(dir)) {
      const std::string ext = f.path().extension().string();
      if (f.is_regular_file() && ext != ".md" && ext != ".tsv") files.push_back(f.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(a));
}

void expect_same_analysis(const Analysis& a, const Analysis& b) {
  EXPECT_EQ(a.mfu.has_value(), b.mfu.has_value());
  if (a.mfu && b.mfu) {
    EXPECT_TRUE(same(*a.mfu, *b.mfu)) << *a.mfu << " vs " << *b.mfu;
  }
  EXPECT_TRUE(same(a.wall_time_s, b.wall_time_s)) << a.wall_time_s << " vs " << b.wall_time_s;
  EXPECT_EQ(a.restarts, b.restarts);
  EXPECT_EQ(a.steps_lost, b.steps_lost);
  ASSERT_EQ(a.buckets.size(), b.buckets.size());
  for (std::size_t k = 0; k < a.buckets.size(); ++k)
    EXPECT_TRUE(same(a.buckets[k].seconds, b.buckets[k].seconds))
        << a.buckets[k].name << ": " << a.buckets[k].seconds << " vs " << b.buckets[k].seconds;
}

TEST(NativeCopies, EveryRealInputAnalysesTheSameFromItsCopy) {
  if (test::samples_dir().empty() || test::samples_next_dir().empty())
    MFU_FAIL_WITHOUT_INPUT(
        "../shared/samples and samples-next are not here: this test copies "
        "every real log");
  AnalyzeOptions o;
  o.gpu = "h100";
  std::size_t compared = 0;
  for (const fs::path& f : every_input()) {
    SCOPED_TRACE(f.string());
    mfu::Run run;
    Analysis direct;
    try {
      run = ingest({f.string()});
      direct = analyze(run, o);
    } catch (const Error&) {
      continue;  // not a log this test can judge (a companion file, an untimed run)
    }
    std::ostringstream copy;
    write_native(run, copy);
    const mfu::Run back = ingest_text(copy.str(), "copy.jsonl");
    expect_same_analysis(direct, analyze(back, o));
    ++compared;
  }
  EXPECT_GT(compared, 120u);  // the excerpts and samples this test was written against: 142
}

}  // namespace
}  // namespace mfu
