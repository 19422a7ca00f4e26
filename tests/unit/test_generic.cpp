// The generic reader on real logs of frameworks no parser knows (tests/data/README.md gives
// their provenance), never chosen over a parser that knows the lines, and --pattern on a real
// OpenNMT-py log. Values by hand from the lines.
#include <gtest/gtest.h>

#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

mfu::Run read_test_data(const std::string& name, const IngestOptions& o = {}) {
  return ingest({test::test_data(name).string()}, o);
}

// mlc-ai/pith-train PR #7: "step 00000001/00000015 | step-time 73.352 sec | ... |
// tokens-per-second 28,590": five steps of 73.352, 28.823, 27.786, 28.437, 27.775 s (186.173 s);
// tokens of a step = 28,590 x 73.352 = 2,097,134 and 72,759 x 28.823 = 2,097,133: the same
// 2^21 = 2,097,152 tokens every step (within 0.01%), a check the lines make of themselves.
TEST(GenericReader, ReadsKeyValueStepLines) {
  const mfu::Run r = read_test_data("generic_pithtrain_pr7_steps.log");
  EXPECT_EQ(r.format, "generic");
  ASSERT_EQ(r.iterations.size(), 5u);
  EXPECT_EQ(r.iterations[0].step, 1);
  EXPECT_DOUBLE_EQ(r.iterations[0].time_s, 73.352);
  EXPECT_NEAR(test::timed_seconds(r), 186.173, 1e-9);
  for (std::size_t i = 0; i < 5; ++i)
    EXPECT_NEAR(r.iterations[i].tokens, 2097152, 0.0001 * 2097152) << i;
  EXPECT_NEAR(r.iterations[0].loss, 2.6636, 1e-6);
  EXPECT_EQ(r.meta.text("generic_fields").value_or(""),
            "step=step time=step_time tokens/s=tokens_per_second loss=cross_entropy_loss");
}

// MichaelHL-ai/tensorflow_PSENet issue #16: "INFO:root:Step 000010, model loss ..., 92.09
// seconds/step, 0.09 examples/second" every 10 steps: step 0 takes 5.59 s, the next two ten-step
// intervals 920.9 s and 919.3 s (1845.79 s in all).
TEST(GenericReader, ReadsValueUnitFields) {
  const mfu::Run r = read_test_data("generic_psenet_issue16_steps.log");
  EXPECT_EQ(r.format, "generic");
  ASSERT_EQ(r.iterations.size(), 3u);
  EXPECT_EQ(r.iterations[2].step, 20);
  EXPECT_EQ(r.iterations[2].count, 10u);
  EXPECT_DOUBLE_EQ(r.iterations[1].time_s, 92.09);
  EXPECT_NEAR(test::timed_seconds(r), 5.59 + 920.9 + 919.3, 1e-9);
  EXPECT_NEAR(r.iterations[0].loss, 1.0328, 1e-6);  // total loss
}

// MXNet's Speedometer (msracver/Deep-Feature-Flow issue #62) and gluon-nlp (dmlc/gluon-nlp PR
// #1261): batch counters with a samples/s rate and no step time; the records are timed by the
// lines' timestamps: 54.110 s and 54.455 s per 100 batches; and 92.568 s per 300 batches, which
// is the "Time cost=92.57" the gluon-nlp line prints for its interval.
TEST(GenericReader, TimesRateLinesByTheirTimestamps) {
  const mfu::Run dff = read_test_data("generic_mxnet_speedometer_dff_issue62.log");
  EXPECT_EQ(dff.format, "generic");
  ASSERT_EQ(dff.iterations.size(), 3u);
  EXPECT_EQ(dff.iterations[1].step, 44000);
  EXPECT_NEAR(dff.iterations[1].time_s, 54.110 / 100, 1e-6);
  EXPECT_NEAR(dff.iterations[2].time_s, 54.455 / 100, 1e-6);
  const mfu::Run g = read_test_data("generic_gluonnlp_pr1261_batches.log");
  EXPECT_EQ(g.format, "generic");
  ASSERT_EQ(g.iterations.size(), 6u);
  EXPECT_EQ(g.iterations[1].count, 300u);
  EXPECT_NEAR(g.iterations[1].time_s * 300, 92.57, 0.01);
}

// Two lines are not enough to choose the generic reader (it needs three that agree), and the
// logs of every known framework are read by their own parser, not by it.
TEST(GenericReader, IsNeverChosenOverAKnownFormatOrOnTooFewLines) {
  EXPECT_THROW(read_test_data("pattern_opennmt_locomotive_issue35.log"), Error);
  for (const char* known_log :
       {"megatron_lm_issue756.log", "torchtitan_excerpt.log", "nanogpt_mfu.log",
        "deepspeed_gptneox.log", "maxtext_steps.log", "nemo2_bionemo_steps.log",
        "nanotron_issue390_steps.log", "torchtune_pr2620_multinode_steps55_61.log",
        "verl_issue1208_gh200_step2.log", "fairseq_issue301_legacy2018.log",
        "llama2c_tinystories_mps.log", "llama2c_modded_llama2_issue10.log", "hf_loss_dicts.log",
        "deepspeed_issue1825_notebook_steps.log"}) {
    const mfu::Run r = read_test_data(known_log);
    EXPECT_NE(r.format, "generic") << known_log;
  }
}

// --pattern on OpenNMT-py's "Step 400/12000; ...; 11915/14711 tok/s;   2684 sec;" (LibreTranslate
// Locomotive issue #35): 2684 s for the first 400 steps (6.71 s each), then 333 s for 50 (6.66 s);
// tokens of a step from the source rate: 11953 x 6.66 = 79,607.
TEST(PatternReader, ReadsNamedGroups) {
  IngestOptions o;
  o.format = "pattern";
  o.pattern =
      R"(Step (?<step>\d+)/\d+;.*; (?<tokens_per_s>\d+)/\d+ tok/s;\s+(?<elapsed_s>\d+) sec;)";
  const mfu::Run r = read_test_data("pattern_opennmt_locomotive_issue35.log", o);
  EXPECT_EQ(r.format, "pattern");
  ASSERT_EQ(r.iterations.size(), 2u);
  EXPECT_EQ(r.iterations[0].count, 400u);
  EXPECT_NEAR(r.iterations[0].time_s, 6.71, 1e-12);
  EXPECT_NEAR(r.iterations[1].time_s, 333.0 / 50, 1e-12);
  EXPECT_NEAR(r.iterations[1].tokens, 11953 * 6.66, 1e-6);
  EXPECT_NEAR(test::timed_seconds(r), 3017, 1e-9);
}

// A group that may match nothing (here the loss right after "12000;") reads as absent.
TEST(PatternReader, AnEmptyGroupIsAbsent) {
  IngestOptions o;
  o.format = "pattern";
  o.pattern = R"(Step (?<step>\d+)/\d+;(?<loss>[\d.]*))";
  const mfu::Run r = read_test_data("pattern_opennmt_locomotive_issue35.log", o);
  ASSERT_EQ(r.iterations.size(), 2u);
  EXPECT_FALSE(known(r.iterations[0].loss));
}

TEST(PatternReader, RefusesPatternsItCannotUse) {
  IngestOptions o;
  o.format = "pattern";
  o.pattern = R"(Step \d+ (?<time_s>[\d.]+))";
  EXPECT_THROW(read_test_data("pattern_opennmt_locomotive_issue35.log", o),
               Error);  // no step group
  o.pattern = R"(Step (?<step>\d+) (?<speed>[\d.]+))";
  EXPECT_THROW(read_test_data("pattern_opennmt_locomotive_issue35.log", o),
               Error);  // unknown group
  o.pattern = R"(Step (?<step>\d+)[)";
  EXPECT_THROW(read_test_data("pattern_opennmt_locomotive_issue35.log", o), Error);  // not a regex
}

}  // namespace
}  // namespace mfu
