// Issue 18's real client: examples/train_tiny.py trains a 2-layer transformer with PyTorch on
// CPU, writing mfu's native log (examples/emit_native_log.py) and a profiler trace of three
// steps. Debian's PyTorch 1.13 has no Kineto, so the trace is the older bare JSON array. The
// expected numbers are computed here from the files themselves and from the model's layer
// sizes, not by mfu.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.hpp"

namespace mfu {
namespace {
namespace fs = std::filesystem;

bool torch_available() {
  return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

nlohmann::json analyze_json(const std::string& path) {
  const auto r = test::run_mfu("analyze " + test::shell_quote(path) + " --peak 100G --output json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(TrainTiny, ARealPyTorchRunIsAnalysedFromItsLogAndItsTrace) {
  if (!torch_available())
    MFU_FAIL_WITHOUT_INPUT(
        "/usr/bin/python3 cannot import torch (tools/setup.sh --with-tests installs "
        "python3-torch)");
  const fs::path dir = fs::temp_directory_path() / ("mfu-tiny-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string cmd =
      "/usr/bin/python3 " +
      test::shell_quote((test::source_dir() / "examples/train_tiny.py").string()) + " --out " +
      test::shell_quote(dir.string()) + " --steps 30 > " +
      test::shell_quote((dir.string() + ".out"));
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  // The log: 30 steps of 8 x 64 tokens; the wall time is the sum of the steps' times.
  double sum_time = 0;
  int steps = 0;
  std::ifstream log(dir / "run.jsonl");
  for (std::string line; std::getline(log, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.contains("time_s")) {
      sum_time += j["time_s"].get<double>();
      ++steps;
    }
  }
  ASSERT_EQ(steps, 30);
  const auto a = analyze_json((dir / "run.jsonl").string());
  EXPECT_EQ(a["iterations"]["total"], 30);
  EXPECT_NEAR(a["wall_time_s"].get<double>(), sum_time, 1e-9 * sum_time);
  // (tokens_per_s is the steady state's, which leaves out warm-up steps when the machine is
  // busy; the totals are the whole run's.)
  EXPECT_DOUBLE_EQ(a["total_tokens"].get<double>(), 30 * 512);
  // PaLM's 6N + 12*L*H*Q*T with N the matmul weights (Q/K/V/out 4*64^2, MLP 2*64*256 per layer,
  // the 256 x 64 output head; the input embedding is a lookup): 6*114,688 + 12*2*4*16*64 =
  // 786,432 FLOPs per token. mfu also counts the layer norms' 320 weights (+0.25%).
  EXPECT_NEAR(a["model_flops_per_token"].get<double>(), 786432.0, 0.005 * 786432.0);
  // Whole-run MFU: all tokens' FLOPs over the whole wall time at 100 GFLOP/s.
  EXPECT_NEAR(a["mfu"].get<double>(),
              a["model_flops_per_token"].get<double>() * 30 * 512 / sum_time / 100e9, 1e-9);

  // The trace: three ProfilerStep spans; each step runs to the next one's start, the last to
  // its own end. A CPU-only trace attributes only data-loader time, and says so.
  std::ifstream tin(dir / "trace.json");
  std::stringstream ss;
  ss << tin.rdbuf();
  const auto events = nlohmann::json::parse(ss.str());
  ASSERT_TRUE(events.is_array());
  std::vector<std::pair<double, double>> spans;  // ts, dur in microseconds
  for (const auto& e : events)
    if (e.value("name", "").rfind("ProfilerStep#", 0) == 0)
      spans.emplace_back(e["ts"].get<double>(), e["dur"].get<double>());
  std::sort(spans.begin(), spans.end());
  ASSERT_EQ(spans.size(), 3U);
  const double window_us = spans.back().first + spans.back().second - spans.front().first;
  const auto t = analyze_json((dir / "trace.json").string());
  EXPECT_EQ(t["iterations"]["total"], 3);
  EXPECT_NEAR(t["wall_time_s"].get<double>(), window_us * 1e-6, 1e-6);
  const auto r =
      test::run_mfu("analyze " + test::shell_quote((dir / "trace.json").string()) + " --peak 100G");
  EXPECT_NE(r.err.find("CPU-only trace"), std::string::npos) << r.err;

  // The pair (issue 19): the log has no timers but the data loader's, so nearly all of its
  // time is unattributed alone; with its own trace the unattributed time is split in the
  // trace's proportions. On a CPU-only trace that is the CPU computing (compute below peak)
  // and the data loader, and the report says what the trace cannot tell.
  const auto both = test::run_mfu("analyze " + test::shell_quote((dir / "run.jsonl").string()) +
                                  " " + test::shell_quote((dir / "trace.json").string()) +
                                  " --peak 100G --output json");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  const auto p = nlohmann::json::parse(both.out);
  double bucket_sum = 0, other = 0;
  std::string below_peak_detail;
  for (const auto& b : p["buckets"]) {
    bucket_sum += b["seconds"].get<double>();
    if (b["name"] == "other") other = b["seconds"].get<double>();
    if (b["name"] == "compute_inefficiency") below_peak_detail = b["detail"].get<std::string>();
  }
  EXPECT_NEAR(bucket_sum, sum_time, 1e-9 * sum_time);  // the parts add up to the log's time
  EXPECT_LT(other, 1e-6 * sum_time);
  EXPECT_NE(below_peak_detail.find("inferred from trace steps"), std::string::npos)
      << below_peak_detail;
  // Per steady step too: the split whatif scales adds up to the mean steady step.
  double split = 0;
  for (const auto& [k, v] : p["steady_step_split_s"].items()) split += v.get<double>();
  EXPECT_NEAR(split, p["step_time_s"]["mean"].get<double>(),
              1e-6 * p["step_time_s"]["mean"].get<double>());
  bool says_cpu_only = false;
  for (const auto& w : p["warnings"])
    says_cpu_only = says_cpu_only || w.get<std::string>().find("CPU-only") != std::string::npos;
  EXPECT_TRUE(says_cpu_only) << p["warnings"];
  fs::remove_all(dir);
  fs::remove(dir.string() + ".out");
}

}  // namespace
}  // namespace mfu
