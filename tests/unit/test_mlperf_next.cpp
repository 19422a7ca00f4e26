// MLPerf Training v5.1 results (../shared/samples-next/mlperf, PROVENANCE there): blocks counted
// by their optimizer step, evaluation batches with their own counter, epochs of train_samples.
// Each record is checked against a figure the log prints itself (its train_step_time, its
// throughput), a second clock the parser does not use.
#include <gtest/gtest.h>

#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

std::size_t restarts(const mfu::Run& r) {
  std::size_t n = 0;
  for (const auto& e : r.events) n += e.kind == EventKind::kRestart ? 1 : 0;
  return n;
}

// Lenovo llama31_8b: 14 blocks of 768 steps ("samples_count": 12288 is the block's, "step": 768
// the run's); 896 validation_step_time points count 0, 1, 2, ... and are no restarts. Block 1
// runs 1759973508.635 -> 1759973817.622 s: 308.987 s / 768 = 0.40233 s, and the log's own
// train_step_time at that block's end says 0.402329.
TEST(MlperfNext, BlocksByTheirStepAndValidationBatchesAreNoRestarts) {
  const std::string path =
      test::next_sample("mlperf", "v5.1_Lenovo_SR680aV4-8xB300_SXM_llama31_8b_result_0");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/mlperf is not here");
  const mfu::Run r = ingest({path});
  ASSERT_EQ(r.iterations.size(), 14u);
  EXPECT_EQ(restarts(r), 0u);
  EXPECT_EQ(r.iterations[0].step, 768);
  EXPECT_EQ(r.iterations[0].count, 768u);
  EXPECT_NEAR(r.iterations[0].time_s, 308.987 / 768, 1e-6);
  EXPECT_NEAR(r.iterations[0].time_s, 0.40232867191533234, 0.001 * 0.4023);
  EXPECT_EQ(r.iterations.back().step, 10752);
}

// GigaComputing R-GAT stops at epoch 0.9 of 94,605,581 samples: 0.9 x 94605581 / 32768 = 2598
// steps; its throughput 309,860.9 samples/s is 32768 / 309860.9 = 0.10575 s a step.
// Quanta DLRM-DCNv2 stops at epoch 0.74990 (under "step") of 4,195,197,692 samples: 56,893
// steps; its throughput 13,519,947 samples/s is 55296 / 13519947 = 4.090 ms a step. Both
// benchmarks print their throughput over the epoch with its evaluations inside; the records
// leave the evaluations out (they are events): records plus evaluations match the throughput.
double with_evaluations(const mfu::Run& r) {
  const Iteration it = r.iterations[0];
  double eval = 0;  // the evaluations before the record's end
  for (const auto& e : r.events)
    if (e.kind == EventKind::kEval && known(e.duration_s) && e.timestamp_s <= it.timestamp_s)
      eval += e.duration_s;
  return (it.time_s * it.count + eval) / it.count;
}

TEST(MlperfNext, EpochsAreCountedInTrainSamples) {
  const std::string rgat =
      test::next_sample("mlperf", "v5.1_GigaComputing_G894-AD1_dgl_rgat_result_0");
  const std::string dlrm =
      test::next_sample("mlperf", "v5.1_Quanta_Cloud_Technology_D74H-7U_dlrm_dcnv2_result_0");
  if (rgat.empty() || dlrm.empty())
    MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/mlperf is not here");
  const mfu::Run g = ingest({rgat});
  ASSERT_EQ(g.iterations.size(), 1u);
  EXPECT_EQ(g.iterations[0].step, 2598);
  EXPECT_NEAR(with_evaluations(g), 32768 / 309860.90510948905, 0.01 * 0.10575);
  const mfu::Run d = ingest({dlrm});
  ASSERT_EQ(d.iterations.size(), 1u);
  EXPECT_EQ(d.iterations[0].step, 56893);
  EXPECT_NEAR(with_evaluations(d), 55296 / 13519947.37394088, 0.01 * 0.00409);
}

// Oracle flux1 (72 B200) stops at step 5016, University of Florida llama31_405b (448 B200) at
// step 304; neither restarts.
TEST(MlperfNext, RunsEndAtTheirStopStep) {
  const std::string flux =
      test::next_sample("mlperf", "v5.1_Oracle_9xBM.GPU.B200.8_flux1_result_0");
  const std::string big =
      test::next_sample("mlperf", "v5.1_University-of-Florida_hpg.dgxb200x8.n56_llama31_405b");
  if (flux.empty() || big.empty())
    MFU_FAIL_WITHOUT_INPUT("../shared/samples-next/mlperf is not here");
  const mfu::Run f = ingest({flux});
  EXPECT_EQ(f.iterations.back().step, 5016);
  EXPECT_EQ(restarts(f), 0u);
  EXPECT_EQ(f.meta.number("gpus"), 72);
  const mfu::Run b = ingest({big});
  EXPECT_EQ(b.iterations.back().step, 304);
  EXPECT_EQ(restarts(b), 0u);
  EXPECT_EQ(b.meta.number("gpus"), 448);
}

}  // namespace
}  // namespace mfu
