// Issue 20: job summaries that merge exactly, and a fleet report whose waterfall is the sum of
// its jobs' by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "mfu/error.hpp"
#include "mfu/summary.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

namespace fs = std::filesystem;

/// A summary with random integer contents (what merging must add exactly).
JobSummary random_summary(std::mt19937_64& rng, int id) {
  std::uniform_int_distribution<std::uint64_t> big(0, std::uint64_t{1} << 62);
  const char* buckets[] = {"compute", "comm", "io", "idle", "other"};
  const char* gpus[] = {"h100-sxm", "a100-sxm4-80gb", "mi300x"};
  JobSummary s;
  s.jobs = 1;
  for (const char* b : buckets) {
    const ExactCount v = static_cast<ExactCount>(big(rng)) * 1000;
    s.bucket_gpu_ns[b] = v;
    s.gpu_ns += v;
  }
  s.model_flops = static_cast<ExactCount>(big(rng)) * big(rng);
  s.peak_flops = s.model_flops * 3;
  s.tokens = big(rng);
  s.mfu_gpu_ns = s.gpu_ns;
  s.steps = big(rng) % 100000;
  s.restarts = big(rng) % 3;
  s.gpu_ns_by_gpu[gpus[id % 3]] = s.gpu_ns;
  s.gpu_ns_by_model[fmt::format("model{}", id % 7)] = s.gpu_ns;
  s.gpu_ns_by_framework[id % 2 ? "megatron" : "native"] = s.gpu_ns;
  s.gpu_ns_by["team"][fmt::format("team{}", id % 4)] = s.gpu_ns;
  s.start_s = 1.7e9 + static_cast<double>(big(rng) % 1000000);
  s.end_s = s.start_s + 3600;
  s.inputs = {fmt::format("job{:03}.log", id)};
  return s;
}

/// Merges `parts` as a random binary tree.
JobSummary merge_tree(std::vector<JobSummary> parts, std::mt19937_64& rng) {
  while (parts.size() > 1) {
    std::uniform_int_distribution<std::size_t> pick(0, parts.size() - 2);
    const std::size_t i = pick(rng);
    parts[i] = merge_summaries(parts[i], parts[i + 1]);
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
  return parts.front();
}

TEST(JobSummaryMerge, AnyOrderAndGroupingGivesTheSameSummary) {
  std::mt19937_64 rng(20261202);
  std::vector<JobSummary> jobs;
  for (int i = 0; i < 60; ++i) jobs.push_back(random_summary(rng, i));
  const std::string reference = summary_json(merge_tree(jobs, rng));
  for (int trial = 0; trial < 25; ++trial) {
    std::shuffle(jobs.begin(), jobs.end(), rng);
    EXPECT_EQ(summary_json(merge_tree(jobs, rng)), reference) << trial;
  }
  // Exact: the fleet's GPU time is the integer sum (no rounding anywhere).
  ExactCount total = 0;
  for (const auto& j : jobs) total += j.gpu_ns;
  EXPECT_EQ(to_decimal(merge_tree(jobs, rng).gpu_ns), to_decimal(total));
  // Perturbed: one nanosecond more in one job shows in the merged line.
  jobs[7].bucket_gpu_ns["io"] += 1;
  jobs[7].gpu_ns += 1;
  EXPECT_NE(summary_json(merge_tree(jobs, rng)), reference);
}

TEST(JobSummaryMerge, TheLineReadsBackToTheSameSummary) {
  std::mt19937_64 rng(7);
  const JobSummary s = merge_summaries(random_summary(rng, 1), random_summary(rng, 2));
  const std::string line = summary_json(s);
  EXPECT_EQ(summary_json(parse_summary(line, "test")), line);
  // A line whose buckets do not add up is refused, as is any other JSON.
  std::string edited = line;
  const auto p = edited.find("\"gpu_ns\":\"") + 10;
  edited[p] = edited[p] == '9' ? '8' : static_cast<char>(edited[p] + 1);
  EXPECT_THROW((void)parse_summary(edited, "test"), Error);
  EXPECT_THROW((void)parse_summary("{\"step\":1}", "test"), Error);
  EXPECT_EQ(to_decimal(static_cast<ExactCount>(1) << 100), "1267650600228229401496703205376");
}

/// 200 jobs on 8 x H100 SXM (989.5 TFLOP/s dense BF16) of four readers, k % 4: native JSON
/// Lines, native CSV, nanotron and Megatron-LM text; plus one file that is no log. Job k has
/// 10 + k % 5 steps of step_s(k), and 0.2 s of model FLOPs at peak on 8 GPUs a step: 1.5832e15
/// FLOPs in the native files, and in the text logs the framework's own count, printed per GPU:
/// 989.5 x 0.2 / step_s TFLOP/s (395.8, 316.64 or 247.375, exact decimals). The native jobs
/// also time 50 ms of exposed communication and 20 ms x (k % 2) of data wait a step; the text
/// logs time nothing else.
bool native_job(int k) {
  return k % 4 < 2;
}
double step_s(int k) {
  if (native_job(k)) return 0.5 + 0.1 * (k % 3);
  const double t[] = {0.5, 0.625, 0.8};
  return t[k % 3];
}

std::string job_text(int k, int n) {
  const double t = step_s(k), d = 0.02 * (k % 2), tflops = 989.5 * 0.2 / t;
  std::string s;
  switch (k % 4) {
    case 0:
      s = "{\"type\":\"meta\",\"gpus\":8,\"gpu\":\"h100-sxm\"}\n";
      for (int i = 1; i <= n; ++i)
        s += fmt::format(
            "{{\"step\":{},\"time_s\":{},\"model_flops\":1.5832e15,\"comm_s\":0.05,\"data_s\":{}}}"
            "\n",
            i, t, d);
      return s;
    case 1:
      s = "step,time_s,model_flops,comm_s,data_s\n";
      for (int i = 1; i <= n; ++i) s += fmt::format("{},{},1.5832e15,0.05,{}\n", i, t, d);
      return s;
    case 2:
      for (int i = 1; i <= n; ++i)
        s += fmt::format(
            "[INFO|DP=0|PP=0|TP=0]: iteration: {} / 100 | consumed_tokens: {}M | "
            "elapsed_time_per_iteration_ms: {} | tokens_per_sec: 833K | global_batch_size: 128 | "
            "lm_loss: 2.1 | model_tflops_per_gpu: {}\n",
            i, i, t * 1000, tflops);
      return s;
    default:
      for (int i = 1; i <= n; ++i)
        s += fmt::format(
            " iteration {:8d}/     100 | consumed samples: {:10d} | elapsed time per iteration "
            "(ms): {:.1f} | throughput per GPU (TFLOP/s/GPU): {} | learning rate: 1.000000E-04 | "
            "global batch size:   128 | lm loss: 2.100000E+00 | loss scale: 1.0 | number of "
            "skipped iterations:   0 | number of nan iterations:   0 |\n",
            i, i * 128, t * 1000, tflops);
      return s;
  }
}

fs::path write_fleet() {
  const fs::path dir = fs::temp_directory_path() / ("mfu-fleet-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const char* ext[] = {"jsonl", "csv", "log", "log"};
  for (int k = 0; k < 200; ++k)
    test::write_file(dir / fmt::format("job{:03}.{}", k, ext[k % 4]), job_text(k, 10 + k % 5));
  test::write_file(dir / "notes.txt", "not a training log\n");
  return dir;
}

TEST(Fleet, TheFleetWaterfallIsTheSumOfItsJobsByHand) {
  const fs::path dir = write_fleet();
  double total = 0, compute = 0, comm = 0, io = 0, flops = 0;
  for (int k = 0; k < 200; ++k) {
    const int n = 10 + k % 5;
    total += n * step_s(k) * 8;
    compute += n * 0.2 * 8;
    if (native_job(k)) {
      comm += n * 0.05 * 8;
      io += n * 0.02 * (k % 2) * 8;
    }
    flops += n * 1.5832e15;
  }
  const auto r =
      test::run_mfu("fleet " + dir.string() + " --gpu h100-sxm --gpus 8 --output summary");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  auto gpu_s = [&](const char* bucket) {
    return std::stod(j["bucket_gpu_ns"].value(bucket, std::string("0"))) * 1e-9;
  };
  EXPECT_EQ(j["jobs"], 200);
  EXPECT_NEAR(std::stod(j["gpu_ns"].get<std::string>()) * 1e-9, total, 1e-9 * total);
  EXPECT_NEAR(gpu_s("compute"), compute, 1e-9 * compute);
  EXPECT_NEAR(gpu_s("comm"), comm, 1e-9 * comm);
  EXPECT_NEAR(gpu_s("io"), io, 1e-9 * io);
  EXPECT_NEAR(std::stod(j["model_flops"].get<std::string>()), flops, 1e-9 * flops);
  EXPECT_NEAR(j["mfu"].get<double>(), compute / total, 1e-9);
  // native, native-csv, nanotron and megatron, 50 jobs each: their GPU time by hand.
  ASSERT_EQ(j["gpu_ns_by_framework"].size(), 4u) << j["gpu_ns_by_framework"].dump();
  const char* framework[] = {"native", "native-csv", "nanotron", "megatron"};
  for (int kind = 0; kind < 4; ++kind) {
    double by_hand = 0;
    for (int k = kind; k < 200; k += 4) by_hand += (10 + k % 5) * step_s(k) * 8;
    EXPECT_NEAR(std::stod(j["gpu_ns_by_framework"].value(framework[kind], std::string("0"))) * 1e-9,
                by_hand, 1e-9 * by_hand)
        << framework[kind];
  }
  // The text report names the job it could not read, with the reason.
  const auto text = test::run_mfu("fleet " + dir.string() + " --gpu h100-sxm --gpus 8");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("could not be analysed"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("notes.txt"), std::string::npos);
  EXPECT_NE(text.out.find("200 jobs"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("lowest MFU"), std::string::npos) << text.out;
  // CSV: a row per job, the unreadable one with its reason.
  const auto csv = test::run_mfu("fleet " + dir.string() + " --gpu h100-sxm --gpus 8 --output csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 202);
  EXPECT_EQ(csv.out.rfind("job,analysed,gpu_hours,mfu,compute_gpu_hours", 0), 0u);
  EXPECT_NE(csv.out.find("notes.txt\",0,"), std::string::npos);
  fs::remove_all(dir);
}

// The HTML page says what the text report says: the same headline, the bucket's GPU time, the
// four frameworks, the unreadable job with its reason; a job's name is escaped, not markup.
TEST(Fleet, TheHtmlPageHoldsTheTextReportsNumbers) {
  const fs::path dir = write_fleet();
  test::write_file(dir / "x<b>y.jsonl", "{\"no\": \"steps\"}\n");  // listed as not analysed
  const std::string args = "fleet " + dir.string() + " --gpu h100-sxm --gpus 8";
  const auto text = test::run_mfu(args);
  const auto html = test::run_mfu(args + " --output html");
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(html.out.find("<h1>200 jobs on "), std::string::npos) << html.out.substr(0, 400);
  const auto mfu_at = text.out.find("MFU ");
  const std::string mfu = text.out.substr(mfu_at, text.out.find(' ', mfu_at + 4) - mfu_at);
  EXPECT_NE(html.out.find(mfu + "</h1>"), std::string::npos) << mfu;
  for (const char* id : {"id=\"summary\"", "id=\"buckets\"", "id=\"worst\"", "id=\"lowest\"",
                         "id=\"failed\"", "<td>nanotron</td>", "<td>megatron</td>", "notes.txt"})
    EXPECT_NE(html.out.find(id), std::string::npos) << id;
  EXPECT_NE(html.out.find("x&lt;b&gt;y.jsonl"), std::string::npos);
  EXPECT_EQ(html.out.find("x<b>y"), std::string::npos);
  EXPECT_EQ(html.out.find("<script"), std::string::npos);
  // The compute row's GPU time is the text report's.
  const auto row = text.out.find("compute at peak");
  ASSERT_NE(row, std::string::npos);
  std::string gpu_time = text.out.substr(row + 15, text.out.find("GPU-", row) - row - 15);
  gpu_time.erase(0, gpu_time.find_first_not_of(' '));
  gpu_time.erase(gpu_time.find_last_not_of(' ') + 1);
  const auto html_row = html.out.find("<td>compute at peak</td>");
  ASSERT_NE(html_row, std::string::npos);
  EXPECT_EQ(html.out.find("<td class=\"num\">" + gpu_time + " GPU-", html_row), html_row + 24)
      << gpu_time;
  fs::remove_all(dir);
}

// analyze --output summary per job, then mfu merge in two groups, equals mfu fleet.
TEST(Fleet, SummariesPerJobMergedInGroupsEqualTheFleet) {
  const fs::path dir = write_fleet();
  fs::remove(dir / "notes.txt");
  std::string part[2];
  int k = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto r =
        test::run_mfu("analyze " + e.path().string() + " --gpu h100-sxm --gpus 8 --output summary");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    part[k++ % 2] += r.out;
    if (k == 60) break;  // a sample keeps the test quick; the rest goes through fleet alone
  }
  test::write_file(dir / "a.sum", part[0]);
  test::write_file(dir / "b.sum", part[1]);
  const auto ab =
      test::run_mfu("merge " + (dir / "a.sum").string() + " " + (dir / "b.sum").string());
  const auto ba =
      test::run_mfu("merge " + (dir / "b.sum").string() + " " + (dir / "a.sum").string());
  ASSERT_EQ(ab.exit_code, 0) << ab.err;
  EXPECT_EQ(ab.out, ba.out);
  const auto j = nlohmann::json::parse(ab.out);
  EXPECT_EQ(j["jobs"], 60);
  const auto text = test::run_mfu("merge " + (dir / "a.sum").string() + " --output text");
  EXPECT_NE(text.out.find("where the GPU time went"), std::string::npos) << text.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// Grouped by a path pattern and by a job table: team vision holds jobs a and b (10 steps of
// 1 s and of 2 s on 8 GPUs: 80 + 160 = 240 GPU-s), team nlp job c (5 steps of 1 s: 40 GPU-s);
// the table gives a and c to user ann and b to bo (ann 120, bo 160); job d is in neither.
TEST(Fleet, GroupsByPathPatternAndJobTable) {
  const fs::path dir = fs::temp_directory_path() / ("mfu-groups-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto job = [&](const fs::path& p, int steps, double t) {
    std::string s = "{\"type\":\"meta\",\"gpus\":8,\"gpu\":\"h100-sxm\"}\n";
    for (int i = 1; i <= steps; ++i)
      s += fmt::format("{{\"step\":{},\"time_s\":{},\"model_flops\":1e15}}\n", i, t);
    fs::create_directories(p.parent_path());
    test::write_file(p, s);
  };
  job(dir / "runs/vision/a.jsonl", 10, 1.0);
  job(dir / "runs/vision/b.jsonl", 10, 2.0);
  job(dir / "runs/nlp/c.jsonl", 5, 1.0);
  job(dir / "runs/nlp/d.jsonl", 5, 1.0);
  test::write_file(dir / "jobs.csv", "job,user\na,ann\nb,bo\nc,ann\n");
  const auto r = test::run_mfu("fleet " + (dir / "runs/vision").string() + " " +
                               (dir / "runs/nlp").string() + " --group-by 'runs/{team}/' --meta " +
                               (dir / "jobs.csv").string() + " --output summary");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  auto gpu_s = [&](const char* key, const char* value) {
    return std::stod(j["gpu_ns_by"][key].value(value, std::string("0"))) * 1e-9;
  };
  EXPECT_NEAR(gpu_s("team", "vision"), 240, 1e-6);
  EXPECT_NEAR(gpu_s("team", "nlp"), 80, 1e-6);
  EXPECT_NEAR(gpu_s("user", "ann"), 120, 1e-6);
  EXPECT_NEAR(gpu_s("user", "bo"), 160, 1e-6);
  EXPECT_NEAR(gpu_s("user", "unmatched"), 40, 1e-6);
  const auto text =
      test::run_mfu("fleet " + (dir / "runs/vision").string() + " --group-by 'runs/{team}/'");
  EXPECT_NE(text.out.find("by team"), std::string::npos) << text.out;
  EXPECT_EQ(test::run_mfu("fleet " + dir.string() + " --group-by 'runs/team/'").exit_code, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mfu
