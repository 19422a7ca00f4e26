// Issue 18, the HTML report: round ticks that never repeat, stalls that do not cover the line,
// smoothed series, the plots and tables the text report has, a footer; and the "fix first"
// list that never ranks "unattributed", naming the options of the run's own framework.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>

#include "analysis/stages.hpp"
#include "mfu/analysis.hpp"
#include "mfu/ingest.hpp"
#include "mfu/report.hpp"
#include "report/svg_chart.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

using detail::nice_ticks;
using detail::running_median;
using detail::tick_label;

Bucket unattributed(double seconds, double fraction) {
  Bucket b;
  b.name = "other";
  b.label = "unattributed";
  b.seconds = seconds;
  b.fraction = fraction;
  return b;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// Heckbert's rule by hand: over [0, 0.37] with 5 ticks the range rounds up to 0.5 and the
// spacing 0.5 / 4 = 0.125 rounds to 0.1, so the ticks are 0, 0.1, ..., 0.4.
TEST(NiceTicks, RoundSpacingCoveringTheRange) {
  const auto t = nice_ticks(0, 0.37, 5);
  ASSERT_EQ(t.size(), 5u);
  for (std::size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(t[i], 0.1 * double(i), 1e-12);
  // [0, 1000] with 6: range 1000, spacing 200 (1000 / 5 = 200 is already round).
  const auto k = nice_ticks(0, 1000, 6);
  ASSERT_EQ(k.size(), 6u);
  EXPECT_DOUBLE_EQ(k[1], 200);
  EXPECT_DOUBLE_EQ(k.back(), 1000);
}

// Steps 1 to 3: a spacing of 0.5 would label 1, 2 twice after rounding ("1 1 2 2 3"); whole
// steps only.
TEST(NiceTicks, AStepAxisNeverRepeatsALabel) {
  for (double hi : {2.0, 3.0, 4.0, 7.0, 11.0, 250.0, 4999.0}) {
    const auto t = nice_ticks(1, hi, 6, true);
    std::vector<std::string> labels;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double spacing = t.size() > 1 ? t[1] - t[0] : 1;
      EXPECT_GE(spacing, 1.0) << hi;
      EXPECT_EQ(t[i], std::round(t[i])) << hi;
      labels.push_back(tick_label(t[i], spacing));
    }
    for (std::size_t i = 1; i < labels.size(); ++i) EXPECT_NE(labels[i], labels[i - 1]) << hi;
  }
}

TEST(NiceTicks, LabelsCarryTheDigitsTheSpacingNeeds) {
  EXPECT_EQ(tick_label(0.1, 0.1), "0.1");
  EXPECT_EQ(tick_label(0.25, 0.05), "0.25");
  EXPECT_EQ(tick_label(2, 1), "2");
  EXPECT_EQ(tick_label(20000, 5000), "20k");
  EXPECT_EQ(tick_label(1.5e6, 5e5), "1.5M");
  EXPECT_EQ(tick_label(3e9, 1e9), "3G");
}

// A running median of 3 over 1, 100, 1, 1, 1: the spike never shows (at the first point the
// window holds 1 and 100: the lower median, 1).
TEST(RunningMedian, ASpikeDoesNotDragTheSmoothedLine) {
  const auto s = running_median({1, 100, 1, 1, 1}, 3);
  for (double v : s) EXPECT_DOUBLE_EQ(v, 1.0);
  // Perturbed: a plateau of three is kept (a change of level, not a spike).
  const auto p = running_median({1, 5, 5, 5, 1}, 3);
  EXPECT_DOUBLE_EQ(p[2], 5.0);
}

/// A native log of `n` one-second steps where every third is a two-second stall, with
/// forward/backward/comm timers: median 1 s and MAD 0, so the threshold is 1% above 1 s and
/// n / 3 records are stalls.
std::string stalled_log(int n) {
  std::string s = "{\"type\":\"meta\",\"gpus\":8,\"gpu\":\"h100-sxm\"}\n";
  for (int i = 1; i <= n; ++i) {
    const double t = i % 3 == 0 ? 2.0 : 1.0;
    s += fmt::format(
        "{{\"step\":{},\"time_s\":{},\"model_flops\":2e15,\"tokens\":65536,\"forward_s\":0.3,"
        "\"backward_s\":0.5,\"comm_s\":0.1}}\n",
        i, t);
  }
  return s;
}

std::string html_of(const Analysis& a, const Run& run, RenderOptions o = {}) {
  std::ostringstream out;
  render_analysis(a, run, OutputFormat::kHtml, o, out);
  return out.str();
}

TEST(HtmlReport, HundredsOfStallsAreShadedAndOnlyTheWorstMarked) {
  const mfu::Run run = ingest_text(stalled_log(300), "stalls.jsonl");
  const Analysis a = analyze(run, AnalyzeOptions{});
  ASSERT_EQ(a.stalls.count, 100u);
  const std::string html = html_of(a, run);
  // Ten markers (the worst, each with its step in a tooltip), the other 90 shaded.
  EXPECT_EQ(count_of(html, "class=\"stall\""), a.stalls.worst.size());
  EXPECT_LE(a.stalls.worst.size(), 10u);
  EXPECT_EQ(count_of(html, "class=\"stallband\""), 100u - a.stalls.worst.size());
  // The stall list is a table with one row per worst stall.
  EXPECT_NE(html.find("<table id=\"stalls\">"), std::string::npos);
}

TEST(HtmlReport, HasThePlotsAndFiguresOfTheTextReport) {
  const mfu::Run run = ingest_text(stalled_log(60), "timers.jsonl");
  const Analysis a = analyze(run, AnalyzeOptions{});
  RenderOptions o;
  o.command_line = "mfu analyze timers.jsonl --output html";
  o.generated_at = "2026-12-02 06:00:00 UTC";
  const std::string html = html_of(a, run, o);
  for (const char* id :
       {"id=\"steptime\"", "id=\"mfu\"", "id=\"tokens\"", "id=\"phases\"", "id=\"histogram\"",
        "id=\"waterfall\"", "id=\"summary\"", "id=\"buckets\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  for (const char* fact : {"p05", "p95", "GPU time", "running median"})
    EXPECT_NE(html.find(fact), std::string::npos) << fact;
  // The stacked phases name each timer the log has, and the rest of the step.
  for (const char* phase : {">forward<", ">backward<", ">comm<", ">not timed<"})
    EXPECT_NE(html.find(phase), std::string::npos) << phase;
  EXPECT_NE(html.find("<footer"), std::string::npos);
  EXPECT_NE(html.find("mfu analyze timers.jsonl --output html"), std::string::npos);
  EXPECT_NE(html.find("2026-12-02 06:00:00 UTC"), std::string::npos);
  // Times never break from their units.
  EXPECT_NE(html.find("td.num,th.num{text-align:right;white-space:nowrap}"), std::string::npos);
}

TEST(HtmlReport, PerRankTablesAreTables) {
  const auto trace = test::test_data("pytorch113_legacy_profiler_trace.json");
  const mfu::Run run = ingest({trace.string()});
  AnalyzeOptions o;
  o.peak_flops = 1e12;
  o.gpus = 1;
  const Analysis a = analyze(run, o);
  const std::string html = html_of(a, run);
  EXPECT_NE(html.find("<h2>Per rank</h2>"), std::string::npos);
  EXPECT_EQ(html.find("<pre>"), std::string::npos);
}

// Generated: a run whose time nothing attributes, read as each framework. The hint names that
// framework's own options and never another's (Megatron's flags on a torchtitan log).
TEST(AttributionHint, NamesTheOptionsOfTheRunsOwnFramework) {
  struct Case {
    const char* format;
    const char* expected;
  };
  const Case cases[] = {
      {"megatron", "--timing-log-level 2"},
      {"deepspeed", "wall_clock_breakdown"},
      {"torchtitan", "--profiling.enable_profiling"},
      {"hf_trainer", "TrainerCallback"},
      {"hf_trainer_state", "TrainerCallback"},
      {"llamafactory", "TrainerCallback"},
      {"nanogpt", "bench.py"},
      {"nemo", "PyTorchProfiler"},
      {"lightning_csv", "PyTorchProfiler"},
      {"composer", "torch_prof_folder"},
      {"torchtune", "profiler.enabled=True"},
      {"nanotron", "profiler_export_path"},
      {"olmo", "torch_profiling"},
      {"maxtext", "profiler=xplane"},
      {"native", "forward_s"},
      {"generic", "torch.profiler.profile"},
  };
  for (const auto& c : cases) {
    Analysis a;
    a.format = c.format;
    a.buckets.push_back(unattributed(50, 0.5));
    detail::fill_attribution_hint(a);
    EXPECT_NE(a.attribution_hint.find(c.expected), std::string::npos) << c.format;
    EXPECT_NE(a.attribution_hint.find("50.0%"), std::string::npos) << a.attribution_hint;
    if (std::string(c.format) != "megatron" && std::string(c.format) != "deepspeed") {
      EXPECT_EQ(a.attribution_hint.find("timing-log-level"), std::string::npos) << c.format;
    }
  }
  // Below 1% of the wall time there is nothing worth a line.
  Analysis small;
  small.format = "torchtitan";
  small.buckets.push_back(unattributed(0.5, 0.005));
  detail::fill_attribution_hint(small);
  EXPECT_TRUE(small.attribution_hint.empty());
}

// A torchtitan log has no timers: most of its time is unattributed. It is never a fix.
TEST(AttributionHint, UnattributedIsNeverRankedAsAFix) {
  ASSERT_TRUE(std::filesystem::exists(test::test_data("torchtitan_excerpt.log")));
  const mfu::Run run = ingest({test::test_data("torchtitan_excerpt.log").string()});
  AnalyzeOptions o;
  o.gpu = "h100-sxm";
  const Analysis a = analyze(run, o);
  const Bucket* other = a.bucket(BucketId::kOther);
  ASSERT_NE(other, nullptr);
  ASSERT_GT(other->fraction, 0.01);
  for (const auto& f : a.fixes) EXPECT_NE(f.bucket, "other");
  EXPECT_NE(a.attribution_hint.find("--profiling.enable_profiling"), std::string::npos)
      << a.attribution_hint;
}

}  // namespace
}  // namespace mfu
