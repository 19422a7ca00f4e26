// Issue 20, the scheduler's share: Slurm's accounting read from real sacct output, and a
// crafted cluster whose idle, fragmentation and failed GPU time are known by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "mfu/error.hpp"
#include "mfu/scheduler.hpp"
#include "mfu/whatif.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

TEST(Sacct, RealAllocTresFoldsStepsAndCountsGpus) {
  const auto a = load_sacct(test::test_data("sacct_slurm_mail_issue142_alloctres.txt").string());
  ASSERT_EQ(a.jobs.size(), 2u);
  EXPECT_EQ(a.step_lines, 3u);
  EXPECT_EQ(a.jobs[0].id, "8117657");
  // gres/gpu=1 is the count; the typed gres/gpu:a100_3g.20gb=1 beside it is the same GPU.
  EXPECT_EQ(a.jobs[0].gpus, 1);
  EXPECT_EQ(a.jobs[1].gpus, 1);
}

TEST(Sacct, RealStatesAreTheJobsNotTheirSteps) {
  const auto a = load_sacct(test::test_data("sacct_cluster_utils_issue87_states.txt").string());
  ASSERT_EQ(a.jobs.size(), 4u);
  EXPECT_EQ(a.step_lines, 12u);
  for (const auto& j : a.jobs) {
    EXPECT_EQ(j.state, "COMPLETED") << j.id;  // the .0 steps were CANCELLED, the jobs not
    EXPECT_FALSE(wasted_state(j.state));
  }
}

/// Hours from 2024-01-01T00:00:00 as sacct prints them.
std::string at(int hour) {
  return fmt::format("2024-01-01T{:02}:00:00", hour);
}

/// An 8-GPU cluster over 4 hours (32 GPU-hours). A: 6 GPUs 0-2 h. B: 4 GPUs, submitted at 0,
/// runs 2-3 h. C: `c_gpus` GPUs, submitted at 1, runs 2-4 h and FAILED.
/// By hand with c_gpus = 2: 0-1 h B waits but 4 > the 2 free GPUs: idle 2; 1-2 h C waits and
/// 2 fit the 2 free: idle while a job waited 2; 2-3 h 6 held, none waiting: idle 2; 3-4 h 2
/// held: idle 6. Held 12 + 4 + 4 = 20, of it C's 4 failed; idle 2 + 2 + 6 = 10; 20 + 2 + 10 = 32.
std::string crafted(int c_gpus) {
  std::string s = "JobID|JobName|Submit|Start|End|AllocTRES|NNodes|State\n";
  s += fmt::format("1|A|{}|{}|{}|cpu=8,gres/gpu=6,node=1|1|COMPLETED\n", at(0), at(0), at(2));
  s += fmt::format("1.batch|batch|{}|{}|{}|cpu=8,gres/gpu=6,node=1|1|COMPLETED\n", at(0), at(0),
                   at(2));
  s += fmt::format("2|B|{}|{}|{}|gres/gpu:h100=4|1|COMPLETED\n", at(0), at(2), at(3));
  s += fmt::format("3|C|{}|{}|{}|gres/gpu={}|1|FAILED\n", at(1), at(2), at(4), c_gpus);
  s += fmt::format("4|cpu-only|{}|{}|{}|cpu=4,node=1|1|CANCELLED by 1000\n", at(0), at(0), at(1));
  return s;
}

TEST(SchedulerShare, ACraftedClusterByHand) {
  const auto s = scheduler_share(parse_sacct(crafted(2), "crafted"), 8);
  EXPECT_DOUBLE_EQ(s.span_s, 4 * 3600.0);
  EXPECT_DOUBLE_EQ(s.capacity_gpu_h, 32);
  EXPECT_DOUBLE_EQ(s.allocated_gpu_h, 20);
  EXPECT_DOUBLE_EQ(s.wasted_gpu_h, 4);
  EXPECT_EQ(s.wasted_jobs, 1u);  // the CPU-only job held no GPU
  EXPECT_DOUBLE_EQ(s.idle_waiting_gpu_h, 2);
  EXPECT_DOUBLE_EQ(s.idle_gpu_h, 10);
  EXPECT_DOUBLE_EQ(s.allocated_gpu_h + s.idle_waiting_gpu_h + s.idle_gpu_h, s.capacity_gpu_h);
  // Perturbed: C needs 3 GPUs, more than the 2 free while it waits: no fragmentation, and the
  // free hour is plain idle (1-2 h: 2; 2-3 h: 1; 3-4 h: 5).
  const auto p = scheduler_share(parse_sacct(crafted(3), "crafted"), 8);
  EXPECT_DOUBLE_EQ(p.idle_waiting_gpu_h, 0);
  EXPECT_DOUBLE_EQ(p.idle_gpu_h, 2 + 2 + 1 + 5);
  EXPECT_DOUBLE_EQ(p.wasted_gpu_h, 6);
}

// The crafted cluster as a job trace CSV, a second path to the same share. With the start and
// end times and states, exactly the sacct figures. Without them (submit, GPUs, duration only),
// a first-come-first-served replay on 8 GPUs: A (6) starts at 0; B (4) waits, 2 free; C (2)
// arrives at 1 h and waits behind B (no backfilling) though it fits: idle while waiting 2 GPU-h;
// at 2 h A ends, B and C start; B ends at 3 h, C at 4 h: the schedule sacct recorded, so the
// same numbers again, but C's failure is unknown (no state column): nothing wasted.
TEST(SchedulerShare, AJobTraceGivesTheSameShareAsTheAccounting) {
  const SchedulerShare by_sacct = scheduler_share(parse_sacct(crafted(2), "crafted"), 8);
  const std::string with_times =
      "job_id,gpu_num,submit_time,start_time,end_time,state\n"
      "A,6,2024-01-01 00:00:00,2024-01-01 00:00:00,2024-01-01 02:00:00,COMPLETED\n"
      "B,4,2024-01-01 00:00:00,2024-01-01 02:00:00,2024-01-01 03:00:00,COMPLETED\n"
      "C,2,2024-01-01 01:00:00,2024-01-01 02:00:00,2024-01-01 04:00:00,Failed\n"
      "cpu,0,2024-01-01 00:00:00,2024-01-01 00:00:00,2024-01-01 01:00:00,CANCELLED\n";
  const SchedulerShare t = scheduler_share(accounting_from_jobs(parse_jobs(with_times, "t"), 8), 8);
  EXPECT_EQ(t.source, "job trace");
  for (auto [a, b] : {std::pair{t.capacity_gpu_h, by_sacct.capacity_gpu_h},
                      {t.allocated_gpu_h, by_sacct.allocated_gpu_h},
                      {t.wasted_gpu_h, by_sacct.wasted_gpu_h},
                      {t.idle_waiting_gpu_h, by_sacct.idle_waiting_gpu_h},
                      {t.idle_gpu_h, by_sacct.idle_gpu_h}})
    EXPECT_DOUBLE_EQ(a, b);
  EXPECT_DOUBLE_EQ(t.wasted_gpu_h, 4);
  const std::string replayed =
      "name,submit_s,gpus,duration_s\nA,0,6,7200\nB,0,4,3600\n"
      "C,3600,2,7200\n";
  const SchedulerShare r = scheduler_share(accounting_from_jobs(parse_jobs(replayed, "r"), 8), 8);
  EXPECT_NE(r.source.find("replayed"), std::string::npos);
  EXPECT_DOUBLE_EQ(r.capacity_gpu_h, 32);
  EXPECT_DOUBLE_EQ(r.allocated_gpu_h, 20);
  EXPECT_DOUBLE_EQ(r.idle_waiting_gpu_h, 2);
  EXPECT_DOUBLE_EQ(r.idle_gpu_h, 10);
  EXPECT_DOUBLE_EQ(r.wasted_gpu_h, 0);
  // Perturbed: C arrives at 2 h, when A has ended: nobody waits while GPUs are free.
  const SchedulerShare late = scheduler_share(
      accounting_from_jobs(
          parse_jobs("name,submit_s,gpus,duration_s\nA,0,6,7200\nB,0,4,3600\nC,7200,2,7200\n",
                     "late"),
          8),
      8);
  EXPECT_DOUBLE_EQ(late.idle_waiting_gpu_h, 0);
  EXPECT_DOUBLE_EQ(late.idle_gpu_h, 12);
  // A job larger than the cluster cannot have run on it.
  EXPECT_THROW((void)accounting_from_jobs(parse_jobs(replayed, "r"), 4), Error);
}

TEST(SchedulerShare, RefusesAClusterSmallerThanItsJobs) {
  EXPECT_THROW((void)scheduler_share(parse_sacct(crafted(2), "crafted"), 4), Error);
  EXPECT_THROW((void)parse_sacct("JobName|State\nx|COMPLETED\n", "no id"), Error);
  EXPECT_THROW((void)parse_sacct("JobID|State\n1|COMPLETED|extra\n", "ragged"), Error);
}

TEST(SchedulerShare, FleetAddsTheSchedulersShare) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("mfu-sched-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  test::write_file(dir / "jobs.txt", crafted(2));
  const auto r = test::run_mfu("fleet examples/classic_330ms.jsonl --sacct " +
                               (dir / "jobs.txt").string() + " --cluster-gpus 8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("the cluster: 8 GPUs over 4.00 h = 32 GPU-hours"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("held by nobody while a job waited that would have fit"), std::string::npos);
  const auto no_size =
      test::run_mfu("fleet examples/classic_330ms.jsonl --sacct " + (dir / "jobs.txt").string());
  EXPECT_EQ(no_size.exit_code, 2);
  test::write_file(dir / "jobs.csv", "name,submit_s,gpus,duration_s\nA,0,6,7200\nB,0,4,3600\n");
  const auto trace = test::run_mfu("fleet examples/classic_330ms.jsonl --jobs " +
                                   (dir / "jobs.csv").string() + " --cluster-gpus 8");
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  EXPECT_NE(trace.out.find("job trace, start times replayed first come first served"),
            std::string::npos)
      << trace.out;
  const auto both =
      test::run_mfu("fleet examples/classic_330ms.jsonl --jobs " + (dir / "jobs.csv").string() +
                    " --sacct " + (dir / "jobs.txt").string() + " --cluster-gpus 8");
  EXPECT_EQ(both.exit_code, 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mfu
