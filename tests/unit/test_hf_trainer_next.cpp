// Hugging Face Trainer outputs of issue 14: the TRL console, trainer_state.json and
// train_results.json of ../shared/samples-next/hf_trainer where they exist, and prediction passes
// in trainer_state.json. Values by hand from the files.
#include <gtest/gtest.h>

#include "mfu/analysis.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

// samples-next/hf_trainer, TRL GRPO console (JuncyLu/trl_DAPO): a dict every 10 steps, each
// taking the bar's step and its elapsed clock: step 10 at 01:29 (8.9 s a step), step 490 at
// 29:00, so the 49 records hold 1740 s.
TEST(HfTrainerNext, TrlConsoleTakesTheBarsStepsAndClock) {
  const std::string path = test::next_sample("hf_trainer", "JuncyLu");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/hf_trainer is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "hf-trainer");
  ASSERT_EQ(r.iterations.size(), 49u);
  EXPECT_EQ(r.iterations[0].step, 10);
  EXPECT_NEAR(r.iterations[0].time_s, 8.9, 1e-9);
  EXPECT_EQ(r.iterations.back().step, 490);
  double total = 0;
  for (std::size_t i = 0; i < r.iterations.size(); ++i)
    total += r.iterations[i].time_s * r.iterations[i].count;
  EXPECT_NEAR(total, 29 * 60, 1e-6);
}

// hsc748NLP/NSLLM: trainer_state.json says 2178 steps (global_step) in train_runtime 857,595 s;
// its train_results.json alone has train_steps_per_second 0.003, which is 0.0025..0.0035 and so
// 2144..3002 steps: the count (2573) is said to be uncertain by 17%, while the wall time is not.
TEST(HfTrainerNext, StateGivesTheStepsAndRoundedRatesAreSaid) {
  const std::string state = test::next_sample("hf_trainer", "hsc748NLP_NSLLM_trainer_state");
  const std::string results = test::next_sample("hf_trainer", "hsc748NLP_NSLLM_train_results");
  if (state.empty() || results.empty())
    MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/hf_trainer is not here");
  const mfu::Run s = ingest({state});
  ASSERT_EQ(s.iterations.size(), 1u);
  EXPECT_EQ(s.iterations[0].step, 2178);
  EXPECT_NEAR(s.iterations[0].time_s * s.iterations[0].count, 857595.0988, 1e-3);
  EXPECT_FALSE(test::has_diagnostic(s, "uncertain"));
  const mfu::Run t = ingest({results});
  ASSERT_EQ(t.iterations.size(), 1u);
  EXPECT_EQ(t.iterations[0].step, 2573);  // round(0.003 x 857595)
  EXPECT_TRUE(test::has_diagnostic(t, "uncertain by 17%"));
  EXPECT_NEAR(t.iterations[0].time_s * t.iterations[0].count, 857595.0988, 1e-3);
}

// A prediction pass after training (trainer.predict): predict_runtime is time of the job
// outside train_runtime, like an evaluation's bucket but never taken out of the training. (No
// public trainer_state.json with predict_* entries was found; this one is made by hand.)
// Training 1000 s over 100 steps, an evaluation of 50 s inside it, a prediction of 30 s after:
// 9.5 s a step, 50 s + 30 s of evaluation, 1030 s in all.
TEST(HfTrainerNext, PredictionPassesAreEvaluationOutsideTraining) {
  const std::string text = R"({"global_step": 100, "log_history": [
    {"loss": 2.0, "step": 50},
    {"eval_loss": 1.9, "eval_runtime": 50.0, "step": 50},
    {"loss": 1.8, "step": 100},
    {"train_runtime": 1000.0, "train_samples_per_second": 3.2, "train_steps_per_second": 0.1,
     "step": 100},
    {"predict_loss": 1.7, "predict_runtime": 30.0, "step": 100}]})";
  const mfu::Run r = ingest_text(text, "trainer_state.json");
  EXPECT_EQ(r.format, "hf-trainer-state");
  ASSERT_EQ(r.iterations.size(), 1u);
  EXPECT_NEAR(r.iterations[0].time_s, 9.5, 1e-9);
  const Analysis a = analyze(r, {});
  EXPECT_NEAR(a.wall_time_s, 1030, 1e-6);
  EXPECT_NEAR(a.bucket(BucketId::kEval)->seconds, 80, 1e-6);
}

}  // namespace
}  // namespace mfu
