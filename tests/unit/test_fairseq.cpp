// fairseq's progress lines, three generations: a real 2018 excerpt (tests/data/README.md) and
// the samples of ../shared/samples-next/fairseq where they exist; values by hand from the lines.
#include <gtest/gtest.h>

#include <cmath>

#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

// A fuzz finding, as a class: a time derived by division (wall 1e308 s over 2.2e-16 updates)
// overflows. Whatever the parser, RunBuilder leaves such a number unknown with a warning on its
// line, never infinite; the first interval keeps its 1 s.
TEST(FairseqParser, AnOverflowingDerivedTimeIsUnknownNotInfinite) {
  const mfu::Run r = ingest_text(
      "| epoch 001:   1 / 10 loss=1.0, wps=5, wpb=10, bsz=1, num_updates=1, wall=1\n"
      "| epoch 001:   2 / 10 loss=1.0, wps=5, wpb=10, bsz=1, num_updates=1.0000000000000002, "
      "wall=1e308\n",
      "overflow.log");
  ASSERT_EQ(r.format, "fairseq");
  ASSERT_FALSE(r.iterations.empty());
  EXPECT_DOUBLE_EQ(r.iterations[0].time_s, 1.0);
  for (std::size_t i = 0; i < r.iterations.size(); ++i)
    EXPECT_FALSE(std::isinf(r.iterations[i].time_s)) << i;
  bool said = false;
  for (const auto& d : r.diagnostics)
    said = said || (d.line == 2 && d.message.find("out of range") != std::string::npos);
  EXPECT_TRUE(said);
}

// facebookresearch/fairseq issue #301 (2018): "| epoch 010  2000 / 8223 loss=1.27 (1.50),
// wps=962, wpb=908, ..." with no clock: an update takes wpb / wps = 908 / 962 = 0.9439 s. The
// batch counter restarts each epoch: epoch 10 batch 2000 is update 9 x 8223 + 2000 = 76,007 and
// epoch 11 batch 1000 is 83,230. Epoch 10's own summary says s/checkpoint 7747 for 8223
// updates, 0.942 s each: within 0.5% of its lines' mean. One validation (its progress line is
// not one).
TEST(FairseqParser, Reads2018LinesWithoutAClock) {
  const mfu::Run r = ingest({test::test_data("fairseq_issue301_legacy2018.log").string()});
  EXPECT_EQ(r.format, "fairseq");
  ASSERT_EQ(r.iterations.size(), 10u);
  EXPECT_EQ(r.iterations[0].step, 76007);
  EXPECT_NEAR(r.iterations[0].time_s, 908.0 / 962, 1e-12);
  EXPECT_DOUBLE_EQ(r.iterations[0].tokens, 908);
  EXPECT_DOUBLE_EQ(r.iterations[0].samples, 32);
  EXPECT_NEAR(r.iterations[0].loss, 1.27, 1e-6);
  EXPECT_EQ(r.iterations[7].step, 83230);
  EXPECT_EQ(r.iterations[7].count, 1223u);  // 223 updates left in epoch 10, then 1000
  double epoch10 = 0;
  for (std::size_t i = 0; i < 7; ++i) epoch10 += r.iterations[i].time_s / 7;
  EXPECT_NEAR(epoch10, 7747.0 / 8223, 0.005 * epoch10);
  std::size_t evals = 0;
  for (const auto& e : r.events) evals += e.kind == EventKind::kEval ? 1 : 0;
  EXPECT_EQ(evals, 1u);
}

// samples-next/fairseq #940 (2019): wall 882 s at update 445, then 973, 1065, 1156, 1263 every
// 50 updates: 882/445 = 1.982 s, then 91/50, 92/50, 91/50 and 107/50 s (the last interval holds
// the validation at 600). train_wall is cumulative: 756, 840 -> 84 s inside the steps of the
// second interval, 1.68 s an update. wpb 104,928 tokens an update.
TEST(FairseqParser, Reads2019LinesByTheirWallClock) {
  const std::string path = test::next_sample("fairseq", "facebookresearch_fairseq_issue940");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/fairseq is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "fairseq");
  ASSERT_EQ(r.iterations.size(), 5u);
  const double seconds[] = {882.0 / 445, 91.0 / 50, 92.0 / 50, 91.0 / 50, 107.0 / 50};
  for (std::size_t i = 0; i < 5; ++i) EXPECT_NEAR(r.iterations[i].time_s, seconds[i], 1e-12);
  EXPECT_EQ(r.iterations[0].step, 445);
  EXPECT_EQ(r.iterations[0].count, 445u);
  EXPECT_NEAR(r.iterations[1].at(Phase::kForwardBackward), 84.0 / 50, 1e-12);
  EXPECT_DOUBLE_EQ(r.iterations[1].tokens, 104872);
  EXPECT_FALSE(
      test::has_diagnostic(r, "wps disagrees"));  // 104872 / 1.82 = 57,600 vs 53,351: close
}

// samples-next/fairseq #2338 (hydra, 2020): wall 1236, 1265, 1294, 1321 every 100 updates, so
// 0.29, 0.29, 0.27 s an update, and train_wall 13 s per interval (the hydra meters reset at
// each line). The printed wps=57.3 against wpb 1504 / 0.29 s = 5,186: 90x apart, said.
TEST(FairseqParser, ReadsHydraLinesAndDistrustsTheirRates) {
  const std::string path = test::next_sample("fairseq", "facebookresearch_fairseq_issue2338");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/fairseq is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "fairseq");
  ASSERT_EQ(r.iterations.size(), 4u);
  EXPECT_NEAR(r.iterations[1].time_s, 0.29, 1e-12);
  EXPECT_NEAR(r.iterations[3].time_s, 0.27, 1e-12);
  EXPECT_FALSE(known(r.iterations[0].at(Phase::kForwardBackward)));  // its interval is unknown
  EXPECT_NEAR(r.iterations[1].at(Phase::kForwardBackward), 13.0 / 100, 1e-12);
  EXPECT_TRUE(test::has_diagnostic(r, "wps disagrees"));
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// facebookresearch/fairseq issue #514 (2019 lines with the epoch summaries between them): by
// hand, the second progress line covers 23,897 - 22,897 = 1,000 updates in 5,048 - 4,847 =
// 201 s (0.201 s each; the log's own wpb / wps = 2,571 / 12,811 = 0.2007 s agrees within
// 0.5%), of which train_wall 4,693 - 4,501 = 192 s inside the steps; the third 1,737 updates
// in 360 s across the end of epoch 9 and its validation. The summaries ("| epoch 009 | loss
// 6.233 | ...") are not progress lines; the two "valid on" lines are evaluations.
TEST(FairseqParser, ReadsIssue514AcrossEpochSummaries) {
  const mfu::Run r = ingest({test::test_data("fairseq_issue514_epochs8_10.log").string()});
  EXPECT_EQ(r.format, "fairseq");
  ASSERT_EQ(r.iterations.size(), 3u);
  EXPECT_EQ(r.iterations[1].count, 1000u);
  EXPECT_NEAR(r.iterations[1].time_s, 0.201, 1e-12);
  EXPECT_NEAR(2571.0 / 12811.0, r.iterations[1].time_s, 0.005 * 0.201);
  EXPECT_NEAR(r.iterations[1].at(Phase::kForwardBackward), 0.192, 1e-12);
  EXPECT_EQ(r.iterations[2].count, 1737u);
  EXPECT_NEAR(r.iterations[2].time_s, 360.0 / 1737.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.iterations[2].tokens, 2534);
  EXPECT_NEAR(test::timed_seconds(r), 5408.0, 1e-6);  // wall= of the last line
  std::size_t evals = 0;
  for (const auto& e : r.events) evals += e.kind == EventKind::kEval;
  EXPECT_EQ(evals, 2u);
}

}  // namespace
}  // namespace mfu
