// mfu whatif: each analytical formula against a worked number from its source, the projection
// on the classic worked example, and the fragmentation replay on a trace solved by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "mfu/whatif.hpp"

namespace mfu {
namespace {

// ---- Formulas ------------------------------------------------------------------------------

TEST(WhatifFormulas, RingAllReduceMatchesNcclBusBandwidthDefinition) {
  // nccl-tests doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n for all-reduce. 1 GB over 8 ranks at
  // 100 GB/s of bus bandwidth: 2 x 7/8 x 1e9 / 1e11 = 17.5 ms.
  EXPECT_NEAR(ring_allreduce_s(1e9, 8, 100e9), 0.0175, 1e-12);
  // All-gather / reduce-scatter: (n-1)/n: 8.75 ms.
  EXPECT_NEAR(ring_allgather_s(1e9, 8, 100e9), 0.00875, 1e-12);
  // One rank moves nothing.
  EXPECT_EQ(ring_allreduce_s(1e9, 1, 100e9), 0.0);
  // Reduce-scatter + all-gather (ZeRO, distributed optimizer) costs one all-reduce.
  EXPECT_NEAR(2 * ring_allgather_s(1e9, 8, 100e9), ring_allreduce_s(1e9, 8, 100e9), 1e-15);
  EXPECT_THROW((void)ring_allreduce_s(1e9, 8, 0), Error);
}

TEST(WhatifFormulas, PipelineBubbleFromGPipeAndMegatron) {
  // GPipe / Narayanan et al. 2021 Sec. 2.2: bubble share (p-1)/(m+p-1); p=4, m=8: 3/11.
  EXPECT_NEAR(pipeline_bubble_fraction(4, 8), 3.0 / 11.0, 1e-15);
  // Bubble relative to the ideal time is (p-1)/m: p=8, m=32 -> 7/32 = 0.21875.
  const double f = pipeline_bubble_fraction(8, 32);
  EXPECT_NEAR(f / (1 - f), 7.0 / 32.0, 1e-15);
  // Interleaved with v=2 chunks: (p-1)/(v m) = 7/64 (Narayanan et al. 2021 Sec. 2.2.2).
  const double fi = pipeline_bubble_fraction(8, 32, 2);
  EXPECT_NEAR(fi / (1 - fi), 7.0 / 64.0, 1e-15);
  EXPECT_EQ(pipeline_bubble_fraction(1, 8), 0.0);
  EXPECT_THROW((void)pipeline_bubble_fraction(4, 0), Error);
}

TEST(WhatifFormulas, YoungAndDalyCheckpointIntervals) {
  // Young 1974: sqrt(2 x 60 s x 86400 s) = sqrt(10,368,000) = 3219.94 s.
  EXPECT_NEAR(young_interval_s(60, 86400), 3219.938, 1e-3);
  // Daly 2006 eq. 37: 3219.938 x (1 + sqrt(60/172800)/3 + 60/(9 x 172800)) - 60
  //   = 3219.938 x (1 + 0.0062113 + 0.0000386) - 60 = 3180.06 s.
  EXPECT_NEAR(daly_interval_s(60, 86400), 3180.06, 0.01);
  // d >= 2M: checkpoint once per MTBF.
  EXPECT_EQ(daly_interval_s(200, 100), 100.0);
}

TEST(WhatifFormulas, CheckpointLossIsMinimalAtYoungsInterval) {
  // delta/tau + (tau/2 + R)/M with tau = 3219.94, delta = 60, M = 86400, R = 600:
  // 0.018634 + (1609.97 + 600)/86400 = 0.018634 + 0.025578 = 0.044212.
  const double tau = young_interval_s(60, 86400);
  EXPECT_NEAR(checkpoint_loss_fraction(tau, 60, 86400, 600), 0.044212, 1e-6);
  // At Young's optimum the two first-order terms are equal: delta/tau = tau/(2M).
  EXPECT_NEAR(60 / tau, tau / (2 * 86400), 1e-12);
  EXPECT_GT(checkpoint_loss_fraction(tau * 1.2, 60, 86400, 600),
            checkpoint_loss_fraction(tau, 60, 86400, 600));
  EXPECT_GT(checkpoint_loss_fraction(tau * 0.8, 60, 86400, 600),
            checkpoint_loss_fraction(tau, 60, 86400, 600));
}

// ---- Projection of a run
// -------------------------------------------------------------------------

/// The classic worked example as a native log (16 GPUs of 19.5 TFLOP/s, 35 TFLOP per step,
/// forward 100 + backward 150 + gradient sync 80 = 330 ms), with optional extra lines.
std::string classic_log(int steps, const std::string& extra = "") {
  std::ostringstream s;
  s << R"({"type":"meta","gpus":16})"
    << "\n";
  for (int i = 1; i <= steps; ++i) {
    s << R"({"step":)" << i
      << R"(,"time_s":0.330,"model_flops":3.5e13,"tokens":131072,"phases":{"forward_s":0.100,"backward_s":0.150,"comm_s":0.080}})"
      << "\n";
  }
  s << extra;
  return s.str();
}

// Phase timers are stored as float (DESIGN: compact columns), so sums agree to ~1e-8 relative.
constexpr double kTol = 1e-7;

Analysis classic_analysis(const std::string& text) {
  AnalyzeOptions o;
  o.peak_flops = 19.5e12;
  return analyze(ingest_text(text, "classic.jsonl"), o);
}

TEST(WhatifProject, ClassicExampleHalvingTheSync) {
  const Analysis a = classic_analysis(classic_log(10));
  Scenario s;
  s.scale["comm"] = 0.5;
  const Projection p = project(a, s);
  EXPECT_NEAR(p.measured.step_time_s, 0.330, kTol);
  EXPECT_NEAR(p.projected.step_time_s, 0.290, kTol);
  // 35e12 / (16 x 19.5e12 x 0.330) = 34.0%; / 0.290 = 38.7%.
  EXPECT_NEAR(*p.measured.mfu, 35e12 / (16 * 19.5e12 * 0.330), kTol);
  EXPECT_NEAR(*p.projected.mfu, 35e12 / (16 * 19.5e12 * 0.290), kTol);
  EXPECT_NEAR(*p.projected.mfu * 100, 38.7, 0.05);
  EXPECT_NEAR(*p.projected.mfu_run, *p.projected.mfu, kTol);
  EXPECT_NEAR(p.projected.wall_time_s, 2.9, kTol);
  EXPECT_NEAR(*p.projected.tokens_per_s, 131072 / 0.290, 1e-2);
  ASSERT_EQ(p.explanations.size(), 1u);
  EXPECT_NE(p.explanations[0].find("80.0 ms -> 40.0 ms"), std::string::npos) << p.explanations[0];
}

TEST(WhatifProject, FasterAcceleratorScalesComputeWithThePeak) {
  const Analysis a = classic_analysis(classic_log(4));
  Scenario s;
  s.peak = 39e12;  // twice the peak: compute 250 ms -> 125 ms, communication as measured
  const Projection p = project(a, s);
  EXPECT_NEAR(p.projected.step_time_s, 0.125 + 0.080, kTol);
  // Ideal time halves too: (0.112179/2) / 0.205 = 27.36% of the new peak.
  EXPECT_NEAR(*p.projected.mfu, 35e12 / (16 * 39e12 * 0.205), kTol);
}

TEST(WhatifProject, MoreGpusAtTheSameGlobalBatch) {
  const Analysis a = classic_analysis(classic_log(4));
  Scenario s;
  s.gpus = 32;
  const Projection p = project(a, s);
  // Compute per GPU halves (125 ms); the all-reduce grows by (31/32)/(15/16) = 1.03333.
  const double comm = 0.080 * (31.0 / 32.0) / (15.0 / 16.0);
  EXPECT_NEAR(p.projected.step_time_s, 0.125 + comm, kTol);
  EXPECT_NEAR(*p.projected.mfu, 35e12 / (32 * 19.5e12 * (0.125 + comm)), kTol);
}

TEST(WhatifProject, OverlapHidesExposedCommunicationUnderCompute) {
  const Analysis a = classic_analysis(classic_log(4));
  Scenario s;
  s.overlap = 0.8;
  const Projection p = project(a, s);
  EXPECT_NEAR(p.projected.step_time_s, 0.250 + 0.016, kTol);
}

TEST(WhatifProject, StallRemovalTakesTheExcessOutOfTheRunAndTheMeanStep) {
  // Nine steady steps and one of 2.330 s: the stall's excess over the 330 ms step is 2.0 s.
  // The mean steady step (analyze's steady state, stalls included) is (20 x 0.330 + 2.0) / 20
  // = 0.430 s; without the stall it is 0.330 s.
  std::string text = classic_log(9);
  text += R"({"step":10,"time_s":2.330,"model_flops":3.5e13,"tokens":131072})"
          "\n";
  for (int i = 11; i <= 20; ++i)
    text +=
        R"({"step":)" + std::to_string(i) +
        R"(,"time_s":0.330,"model_flops":3.5e13,"tokens":131072,"phases":{"forward_s":0.100,"backward_s":0.150,"comm_s":0.080}})"
        "\n";
  const Analysis a = classic_analysis(text);
  ASSERT_EQ(a.stalls.count, 1u);
  Scenario s;
  s.stalls = 0;
  const Projection p = project(a, s);
  EXPECT_NEAR(p.measured.wall_time_s, 20 * 0.330 + 2.0, 1e-6);
  EXPECT_NEAR(p.projected.wall_time_s, 20 * 0.330, 1e-6);
  EXPECT_NEAR(p.measured.step_time_s, 0.430, 1e-9);
  EXPECT_NEAR(p.projected.step_time_s, 0.330, 1e-9);
  EXPECT_NEAR(*p.measured.mfu, *a.mfu_steady, 1e-12);  // one definition of "steady"
  EXPECT_NEAR(*p.projected.mfu_run, 35e12 / (16 * 19.5e12 * 0.330), 1e-6);
}

TEST(WhatifProject, TrainingTimeAndCost) {
  const Analysis a = classic_analysis(classic_log(10));
  Scenario s;
  s.train_tokens = 131072.0 * 1000;  // 1000 steps
  s.price_per_gpu_hour = 2.0;
  const Projection p = project(a, s);
  EXPECT_NEAR(*p.measured.train_time_s, 330.0, 1e-6);
  EXPECT_NEAR(*p.measured.gpu_hours, 330.0 * 16 / 3600, 1e-9);
  EXPECT_NEAR(*p.measured.cost, 2.0 * 330.0 * 16 / 3600, 1e-9);
}

TEST(WhatifProject, TimeToTrainIsTheSteadyPacePlusOneStartup) {
  // A one-hour set-up before ten steps of 330 ms. Training 1000 steps' tokens takes the
  // steady pace (1000 x 0.330 s = 330 s) plus the set-up once: 3930 s. Scaling the logged
  // run (3603.3 s for 10 steps) with the tokens would say 100x that: 360,330 s.
  const std::string log =
      R"({"type":"event","kind":"startup","step":0,"duration_s":3600.0,"detail":"setup"})"
      "\n" +
      classic_log(10);
  const Analysis a = classic_analysis(log);
  ASSERT_NEAR(a.bucket(BucketId::kStartup)->seconds, 3600.0, 1e-9);
  Scenario s;
  s.train_tokens = 131072.0 * 1000;
  const Projection p = project(a, s);
  EXPECT_NEAR(*p.measured.train_time_s, 3600.0 + 330.0, 1e-6);
}

TEST(WhatifProject, RefusesWhatCannotApply) {
  const Analysis a = classic_analysis(classic_log(4));
  Scenario bad_bucket;
  bad_bucket.scale["network"] = 0.5;
  EXPECT_THROW((void)project(a, bad_bucket), Error);
  Scenario compute;
  compute.scale["compute"] = 0.5;
  EXPECT_THROW((void)project(a, compute), Error);
  Scenario negative;
  negative.scale["comm"] = -1;
  EXPECT_THROW((void)project(a, negative), Error);
  Scenario overlap;
  overlap.overlap = 1.5;
  EXPECT_THROW((void)project(a, overlap), Error);
}

// ---- Analytical estimate -----------------------------------------------------------------------

EstimateInputs small_layout() {
  EstimateInputs in;
  in.model.id = "test";
  in.model.params = 1e9;  // 6N = 6e9 FLOP/token (no shape: no attention term)
  in.model.seq_len = 1000;
  in.peak = 1e14;
  in.gpus = 8;
  in.pp = 2;
  in.global_batch = 8;  // dp = 4, m = 8 / (1 x 4) = 2 micro-batches
  in.kernel_efficiency = 0.5;
  in.intra_node_bw = 100e9;
  return in;
}

TEST(WhatifEstimate, StepBreakdownByHand) {
  const StepEstimate e = estimate_step(small_layout());
  // 6e9 x 8000 tokens = 4.8e13 FLOP; at 8 x 1e14 x 50%: 120 ms; ideal 60 ms.
  EXPECT_NEAR(e.compute_s, 0.120, 1e-12);
  EXPECT_NEAR(e.ideal_s, 0.060, 1e-12);
  // Bubble (p-1)/m = 1/2 of the pipelined work: 60 ms.
  EXPECT_NEAR(e.bubble_s, 0.060, 1e-12);
  // Gradients of 1e9 / pp 2 parameters x 2 bytes = 1 GB; ring over dp=4 in one node at
  // 100 GB/s: 2 x 3/4 x 1e9 / 1e11 = 15 ms, nothing overlapped.
  EXPECT_NEAR(e.dp_comm_s, 0.015, 1e-12);
  EXPECT_NEAR(e.dp_exposed_s, 0.015, 1e-12);
  EXPECT_NEAR(e.step_time_s, 0.195, 1e-12);
  EXPECT_NEAR(e.mfu, 0.060 / 0.195, 1e-12);
  EXPECT_NEAR(e.tokens_per_s, 8000 / 0.195, 1e-6);
}

TEST(WhatifEstimate, OverlapCompressionAndRecomputation) {
  EstimateInputs in = small_layout();
  in.overlap = 0.5;
  in.grad_compression = 4;
  const StepEstimate e = estimate_step(in);
  EXPECT_NEAR(e.dp_comm_s, 0.015 / 4, 1e-12);
  EXPECT_NEAR(e.dp_exposed_s, 0.015 / 8, 1e-12);
  // Across nodes (dp 16 > 8 GPUs per node) the NIC bandwidth applies.
  EstimateInputs wide = small_layout();
  wide.gpus = 32;
  wide.global_batch = 32;
  wide.inter_node_bw = 25e9;
  const StepEstimate w = estimate_step(wide);
  EXPECT_NEAR(w.dp_comm_s, 2.0 * 15.0 / 16.0 * 1e9 / 25e9, 1e-12);
}

TEST(WhatifEstimate, TensorParallelAllReducesPerLayer) {
  EstimateInputs in;
  in.model.id = "tp";
  in.model.params = 1e9;
  in.model.layers = 10;
  in.model.hidden = 1000;
  in.model.seq_len = 1000;
  in.peak = 1e14;
  in.gpus = 2;
  in.tp = 2;
  in.global_batch = 4;  // dp 1, 4 micro-batches of 1
  in.intra_node_bw = 100e9;
  const StepEstimate e = estimate_step(in);
  // Each all-reduce: 1 x 1000 x 1000 x 2 bytes = 2 MB, 2 x 1/2 x 2e6 / 1e11 = 20 us;
  // 10 layers x 4 micro-batches x 4 all-reduces = 160 of them: 3.2 ms.
  EXPECT_NEAR(e.tp_comm_s, 160 * 2e-5, 1e-12);
  EXPECT_EQ(e.dp_comm_s, 0.0);
}

TEST(WhatifEstimate, DataParallelScalingAtFixedGlobalBatch) {
  const auto pts = scaling_at_fixed_batch(small_layout(), {0.25, 0.5, 1, 2, 4});
  // 2 GPUs: dp 1, m 8; 4: dp 2, m 4; 8: dp 4, m 2; 16: dp 8, m 1; 32: dp 16, m 0.5 (invalid).
  ASSERT_EQ(pts.size(), 4u);
  EXPECT_EQ(pts.front().gpus, 2);
  EXPECT_EQ(pts.back().gpus, 16);
  // The bubble grows as micro-batches shrink: (p-1)/m = 1/8 -> 1/1.
  EXPECT_NEAR(pts.front().estimate.bubble_s / pts.front().estimate.compute_s, 1.0 / 8, 1e-12);
  EXPECT_NEAR(pts.back().estimate.bubble_s / pts.back().estimate.compute_s, 1.0, 1e-12);
  EXPECT_GT(pts.front().estimate.mfu, pts.back().estimate.mfu);
}

TEST(WhatifEstimate, CheckpointIntervalAndLoss) {
  EstimateInputs in = small_layout();
  in.checkpoint_s = 60;
  in.mtbf_s = 86400;
  in.restart_s = 600;
  const StepEstimate e = estimate_step(in);
  EXPECT_NEAR(*e.checkpoint_interval_s, 3180.06, 0.01);
  EXPECT_NEAR(*e.failure_loss_fraction, 60 / 3180.06 + (3180.06 / 2 + 600) / 86400, 1e-6);
}

TEST(WhatifEstimate, LayoutErrorsNameTheFlags) {
  EstimateInputs in = small_layout();
  in.gpus = 7;  // not a multiple of pp 2
  EXPECT_NE(estimate_layout_problem(in).find("multiple"), std::string::npos);
  EXPECT_THROW((void)estimate_step(in), Error);
  in = small_layout();
  in.global_batch = 6;  // 6 / (1 x 4) is not whole
  EXPECT_THROW((void)estimate_step(in), Error);
  in = small_layout();
  in.peak.reset();
  EXPECT_THROW((void)estimate_step(in), Error);
}

// ---- Cluster fragmentation
// -----------------------------------------------------------------------

// Two nodes of 8 GPUs. A and B (4 GPUs, 10 s) arrive at 0, C (8 GPUs, 10 s) at 1.
//  spread: A -> node 0, B -> node 1 (the most free); C finds 4 + 4 free, fits the total but no
//  node:
//          it waits 1..10 s with 8 GPUs idle = 72 GPU-s; runs 10..20. Makespan 20 s.
//  pack:   A and B share node 0; C takes node 1 at 1 s, ends at 11 s. Makespan 11 s, no idle.
const char* kTrace = "name,submit_s,gpus,duration_s\nA,0,4,10\nB,0,4,10\nC,1,8,10\n";

TEST(WhatifCluster, SpreadFragmentsWherePackDoesNot) {
  const JobTrace t = parse_jobs(kTrace, "trace.csv");
  ASSERT_EQ(t.jobs.size(), 3u);
  const ClusterResult spread = replay_cluster(t.jobs, 2, 8, Placement::kSpread);
  EXPECT_NEAR(spread.makespan_s, 20.0, 1e-12);
  EXPECT_NEAR(spread.fragmentation_idle_gpu_h, 72.0 / 3600, 1e-15);
  EXPECT_EQ(spread.fragmentation_blocked_jobs, 1u);
  EXPECT_NEAR(spread.max_wait_s, 9.0, 1e-12);
  EXPECT_NEAR(spread.mean_wait_s, 3.0, 1e-12);
  EXPECT_NEAR(spread.utilization, 160.0 / (16 * 20), 1e-12);
  const ClusterResult pack = replay_cluster(t.jobs, 2, 8, Placement::kPack);
  EXPECT_NEAR(pack.makespan_s, 11.0, 1e-12);
  EXPECT_EQ(pack.fragmentation_idle_gpu_h, 0.0);
  EXPECT_EQ(pack.max_wait_s, 0.0);
  EXPECT_NEAR(pack.utilization, 160.0 / (16 * 11), 1e-12);
}

TEST(WhatifCluster, MultiNodeJobsTakeWholeFreeNodesInArrivalOrder) {
  // 2 nodes x 8. A (2 GPUs, 5 s) at 0 on node 0; B (16 GPUs, 10 s) at 0 waits for node 0 until 5;
  // C (1 GPU, 1 s) at 1 waits behind B (first come first served): it runs 15..16.
  const JobTrace t = parse_jobs("submit_s,gpus,duration_s\n0,2,5\n0,16,10\n1,1,1\n", "t.csv");
  const ClusterResult r = replay_cluster(t.jobs, 2, 8, Placement::kPack);
  EXPECT_NEAR(r.makespan_s, 16.0, 1e-12);
  EXPECT_NEAR(r.max_wait_s, 14.0, 1e-12);
  // B needs all 16 GPUs; while A runs only 14 are free, so it does not fit the total: no
  // fragmentation is counted.
  EXPECT_EQ(r.fragmentation_idle_gpu_h, 0.0);
  // A job larger than the cluster is left out, not waited for forever.
  const JobTrace big = parse_jobs("submit_s,gpus,duration_s\n0,32,10\n0,1,1\n", "big.csv");
  const ClusterResult rb = replay_cluster(big.jobs, 2, 8, Placement::kSpread);
  EXPECT_EQ(rb.unschedulable, 1u);
  EXPECT_EQ(rb.jobs, 1u);
}

TEST(WhatifCluster, ReadsHeliosStyleTraces) {
  // Helios cluster_log.csv / AcmeTrace columns: date-times, gpu_num, duration; CPU jobs skipped.
  const JobTrace t = parse_jobs(
      "job_id,user,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration\n"
      "j1,u1,8,64,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 00:00:20,2020-04-01 01:00:20,3600\n"
      "j0,u2,0,4,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:00,2020-04-01 00:00:30,30\n"
      "j2,u1,2,16,1,FAILED,2020-04-01 00:00:05,2020-04-01 00:00:05,2020-04-01 00:10:05,600\n",
      "cluster_log.csv");
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.zero_gpu_jobs, 1u);
  EXPECT_EQ(t.jobs[0].name, "j2");  // sorted by submission, relative to the first GPU job
  EXPECT_EQ(t.jobs[0].submit_s, 0.0);
  EXPECT_EQ(t.jobs[1].submit_s, 5.0);
  EXPECT_EQ(t.jobs[1].duration_s, 3600.0);
  // start_time/end_time when there is no duration column.
  const JobTrace se = parse_jobs("submit_s,gpus,start_time,end_time\n0,1,100,160\n", "se.csv");
  EXPECT_EQ(se.jobs[0].duration_s, 60.0);
}

TEST(WhatifCluster, BadTracesAreErrorsWithTheLine) {
  try {
    (void)parse_jobs("submit,gpus\n0,1\n", "no_duration.csv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_duration.csv:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("duration_s"), std::string::npos) << e.what();
  }
  try {
    (void)parse_jobs("submit_s,gpus,duration_s\n0,1,10\n5,2,-3\n", "neg.csv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("neg.csv:3"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)parse_jobs("submit_s,gpus,duration_s\n0,1.5,10\n", "frac.csv"), Error);
  EXPECT_THROW((void)parse_jobs("submit_s,gpus,duration_s\nnan,1,10\n", "nan.csv"), Error);
  EXPECT_THROW((void)parse_jobs("", "empty.csv"), Error);
  EXPECT_THROW((void)replay_cluster({}, 0, 8, Placement::kPack), Error);
}

}  // namespace
}  // namespace mfu
