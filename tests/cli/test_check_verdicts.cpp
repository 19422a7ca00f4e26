// `mfu check` through the real binary: false passes that must fail, baselines that must be
// refused, runs that cannot be judged (exit 2), and the exit-code table of examples/ci.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>

#include "test_util.hpp"

namespace mfu {
namespace {

using test::read_file;
using test::run_mfu;
using test::shell_quote;
using test::write_file;

namespace fs = std::filesystem;

/// 8 x A100 SXM4 80GB: 2.496e15 FLOP/s at peak. `flops` per step of `time_s` seconds gives
/// MFU = flops / (2.496e15 x time_s): 1.248e15 at 1 s is 50%, 4.992e14 is 20%. Each step's
/// time is jittered by a normal factor of standard deviation `jitter`.
std::string native_run(int steps, double time_s, double flops, double jitter, unsigned seed,
                       const std::string& gpu = "a100-sxm4-80gb") {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(1.0, jitter);
  std::string s = R"({"type":"meta","gpu":")" + gpu + R"(","gpus":8})" + "\n";
  for (int i = 1; i <= steps; ++i) {
    const double t = time_s * std::max(0.5, jitter > 0 ? noise(rng) : 1.0);
    s += R"({"step":)" + std::to_string(i) + R"(,"time_s":)" + std::to_string(t) +
         R"(,"model_flops":)" + std::to_string(flops) + R"(,"tokens":131072})" + "\n";
  }
  return s;
}

class CheckVerdicts : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / ("mfu-verdicts-" + std::to_string(::getpid()));

  std::string file(const std::string& name, const std::string& text) {
    write_file(dir / name, text);
    return shell_quote((dir / name).string());
  }
  /// A baseline report written by `mfu analyze --output json` from `log_text`.
  std::string baseline(const std::string& name, const std::string& log_text,
                       const std::string& flags = "") {
    const std::string log = file(name + ".jsonl", log_text);
    const std::string out = shell_quote((dir / (name + ".json")).string());
    EXPECT_EQ(run_mfu("analyze " + log + flags + " --output json -o " + out).exit_code, 0);
    return out;
  }
  /// The baseline with `edit` applied to its JSON.
  std::string edited(const std::string& base, const std::string& name,
                     void (*edit)(nlohmann::json&)) {
    std::string path = base.substr(1, base.size() - 2);  // unquote
    nlohmann::json j = nlohmann::json::parse(read_file(path));
    edit(j);
    return file(name, j.dump());
  }
};

TEST_F(CheckVerdicts, SameStepTimesButFewerFlopsIsARegression) {
  // Point 1 of issue 15: 20% against a 50% baseline with the same step times.
  const std::string base = baseline("b50", native_run(100, 1.0, 1.248e15, 0.02, 1));
  const std::string run = file("r20.jsonl", native_run(100, 1.0, 4.992e14, 0.02, 2));
  const auto r = run_mfu("check " + run + " --baseline " + base);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  // Baseline ~50%, this run ~20% (the jitter moves the second decimal), -60% relative.
  EXPECT_NE(r.out.find("MFU (steady): baseline 50.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("this run 19.9"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-60."), std::string::npos) << r.out;
  // A baseline without any per-step sample: the point values decide, and it says so.
  const std::string bare = edited(base, "bare.json", [](nlohmann::json& j) {
    j.erase("step_time_sample_s");
    j.erase("mfu_sample");
    j.erase("tokens_per_s_per_gpu_sample");
  });
  const auto p = run_mfu("check " + run + " --baseline " + bare);
  EXPECT_EQ(p.exit_code, 1) << p.out;
  EXPECT_NE(p.out.find("no noise estimate"), std::string::npos) << p.out;
  // A noisy 20% run (30% jitter per step) against the 50% baseline still fails.
  const std::string noisy = file("noisy.jsonl", native_run(100, 1.0, 4.992e14, 0.30, 3));
  EXPECT_EQ(run_mfu("check " + noisy + " --baseline " + base).exit_code, 1);
}

TEST_F(CheckVerdicts, ARealRegressionFailsAtFivePercentAndPassesAtFifteen) {
  // 10% slower steps of the same model: MFU falls by 1 - 1/1.10 = 9.1%.
  const std::string base = baseline("b", native_run(200, 1.0, 1.248e15, 0.02, 11));
  const std::string slow = file("slow.jsonl", native_run(200, 1.10, 1.248e15, 0.02, 12));
  EXPECT_EQ(run_mfu("check " + slow + " --baseline " + base + " --max-regression 5%").exit_code, 1);
  EXPECT_EQ(run_mfu("check " + slow + " --baseline " + base + " --max-regression 15%").exit_code,
            0);
  // Equal step times, 10% fewer FLOPs per step (a smaller batch): MFU falls by 10%.
  const std::string less = file("less.jsonl", native_run(200, 1.0, 1.248e15 * 0.9, 0.02, 13));
  EXPECT_EQ(run_mfu("check " + less + " --baseline " + base + " --max-regression 5%").exit_code, 1);
  EXPECT_EQ(run_mfu("check " + less + " --baseline " + base + " --max-regression 15%").exit_code,
            0);
}

TEST_F(CheckVerdicts, BadBaselinesAreRefusedNamingTheField) {
  const std::string base = baseline("b", native_run(50, 1.0, 1.248e15, 0.02, 21));
  const std::string run = file("r.jsonl", native_run(50, 1.0, 1.248e15, 0.02, 22));
  struct Case {
    const char* name;
    void (*edit)(nlohmann::json&);
    const char* message;
  };
  const Case cases[] = {
      {"zero.json", [](nlohmann::json& j) { j["mfu_steady"] = 0; }, "field 'mfu_steady' is 0"},
      {"string.json", [](nlohmann::json& j) { j["mfu_steady"] = "0.5"; },
       "field 'mfu_steady' is string"},
      {"above.json", [](nlohmann::json& j) { j["mfu_steady"] = 1.5; }, "field 'mfu_steady' is 1.5"},
      {"negative.json", [](nlohmann::json& j) { j["mfu"] = -0.2; }, "field 'mfu' is -0.2"},
      {"schema.json", [](nlohmann::json& j) { j["schema_version"] = -1; }, "schema_version -1"},
      {"time.json", [](nlohmann::json& j) { j["step_time_s"]["median"] = 0; },
       "field 'step_time_s.median' is 0"},
  };
  for (const auto& c : cases) {
    const auto r =
        run_mfu("check " + run + " --baseline " + edited(base, c.name, c.edit) + " --strict");
    EXPECT_EQ(r.exit_code, 2) << c.name;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.name << ": " << r.err;
  }
}

TEST_F(CheckVerdicts, ABaselineOfOtherHardwareIsNotComparedUnlessAllowed) {
  // The same log, once analyzed as H100s: a100 MFU against an h100 baseline would "improve".
  const std::string log = native_run(50, 1.0, 1.248e15, 0.02, 31);
  const std::string base = baseline("h100", log, " --gpu h100-sxm");
  const std::string run = file("a100.jsonl", log);
  const auto r = run_mfu("check " + run + " --baseline " + base);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not comparable"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gpu (h100-sxm in the baseline, a100-sxm4-80gb here)"), std::string::npos)
      << r.err;
  // A baseline from 1024 GPUs of another model: both differences named.
  const std::string big = edited(base, "big.json", [](nlohmann::json& j) {
    j["gpus"] = 1024;
    j["gpu"] = "a100-sxm4-80gb";
    j["model_flops_per_token"] = 1.2e12;
  });
  const auto b = run_mfu("check " + run + " --baseline " + big);
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("gpus (1024 in the baseline, 8 here)"), std::string::npos) << b.err;
  const auto allowed = run_mfu("check " + run + " --baseline " + base + " --allow-different gpu");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  EXPECT_NE(allowed.out.find("differs in gpu (allowed)"), std::string::npos) << allowed.out;
}

TEST_F(CheckVerdicts, RunsThatCannotBeJudgedExitTwo) {
  const std::string good = native_run(50, 1.0, 1.248e15, 0.0, 41);
  struct Case {
    std::string name, args, message;
  };
  std::string half_garbage = good;
  for (int i = 0; i < 60; ++i)
    half_garbage += R"({"step": 99, "time_s": )"
                    "\n";
  const std::string no_gpu = [&] {
    std::string s = good;
    s.replace(s.find(R"("gpu":"a100-sxm4-80gb",)"), 23, "");
    return s;
  }();
  const std::vector<Case> cases = {
      {"nothing", file("good.jsonl", good), "nothing to check"},
      {"warm-up only", file("good2.jsonl", good) + " --min-mfu 10% --warmup 1000", "warm-up"},
      {"too few", file("few.jsonl", native_run(3, 1.0, 1.248e15, 0.0, 42)) + " --min-mfu 10%",
       "only 3 steady-state step records"},
      {"no records",
       file("empty.jsonl", R"({"type":"meta","gpus":8})"
                           "\n") +
           " --min-mfu 10%",
       ""},
      {"MFU unknown", file("nogpu.jsonl", no_gpu) + " --min-mfu 10%", "cannot judge: min-mfu"},
      {"garbage", file("garbage.jsonl", half_garbage) + " --min-mfu 10%",
       "record lines could not be read"},
      {"ambiguous ratio", file("good3.jsonl", good) + " --min-mfu 10% --max-regression 1",
       "ambiguous"},
      {"ambiguous bucket", file("good4.jsonl", good) + " --max-bucket other=1", "ambiguous"},
  };
  for (const auto& c : cases) {
    const auto r = run_mfu("check " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.name << "\n" << r.out << r.err;
    EXPECT_NE((r.out + r.err).find(c.message), std::string::npos) << c.name << "\n"
                                                                  << r.out << r.err;
  }
}

TEST_F(CheckVerdicts, ACutOffInputNeedsAllowPartial) {
  // A gzip stream cut in the middle: the job died while writing.
  const std::string text = native_run(400, 1.0, 1.248e15, 0.0, 51);
  write_file(dir / "full.jsonl", text);
  ASSERT_EQ(std::system(("gzip -kf " + shell_quote((dir / "full.jsonl").string())).c_str()), 0);
  const std::string gz = read_file(dir / "full.jsonl.gz");
  const std::string cut = file("cut.jsonl.gz", gz.substr(0, gz.size() * 2 / 3));
  const auto r = run_mfu("check " + cut + " --min-mfu 10%");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("cut off"), std::string::npos) << r.out;
  EXPECT_EQ(run_mfu("check " + cut + " --min-mfu 10% --allow-partial").exit_code, 0);
}

TEST_F(CheckVerdicts, JunitHoldsTheJudgedValuesAndWhyARunCannotBeJudged) {
  const std::string run = file("j.jsonl", native_run(50, 1.0, 1.248e15, 0.0, 81));
  const std::string junit = shell_quote((dir / "junit.xml").string());
  // Steady MFU 50% is judged: the property is that value, not the whole-run MFU.
  EXPECT_EQ(run_mfu("check " + run + " --min-mfu 40% --junit " + junit).exit_code, 0);
  const std::string xml = read_file(dir / "junit.xml");
  EXPECT_NE(xml.find(R"(<property name="min-mfu" value="0.5)"), std::string::npos) << xml;
  const std::string few = file("few.jsonl", native_run(3, 1.0, 1.248e15, 0.0, 82));
  EXPECT_EQ(run_mfu("check " + few + " --min-mfu 40% --junit " + junit).exit_code, 2);
  const std::string cannot = read_file(dir / "junit.xml");
  EXPECT_NE(cannot.find(R"(type="cannot judge")"), std::string::npos) << cannot;
  EXPECT_NE(cannot.find(R"(errors="1")"), std::string::npos) << cannot;
}

TEST_F(CheckVerdicts, JsonOnStdoutStaysJsonUnderGithubActions) {
  const std::string run = file("r.jsonl", native_run(50, 1.0, 1.248e15, 0.0, 61));
  const auto r = run_mfu("check " + run + " --min-mfu 10% --output json", "GITHUB_ACTIONS=true");
  EXPECT_EQ(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["verdict"], "passed");
  EXPECT_NE(r.err.find("::notice"), std::string::npos);
}

TEST_F(CheckVerdicts, ABucketThatGrewIsNamedAndItsShareComparedWhenAsked) {
  // Baseline: 1 s steps with 50 ms of data wait (a 5% share). This run: 1.3 s steps with
  // 350 ms of it (26.9%): MFU falls by 1 - 1/1.3 = 23%, and the data wait grew by 300 ms per
  // step, more than any other bucket.
  auto with_data = [](double step, double data) {
    std::string s = R"({"type":"meta","gpu":"a100-sxm4-80gb","gpus":8})"
                    "\n";
    for (int i = 1; i <= 60; ++i)
      s += R"({"step":)" + std::to_string(i) + R"(,"time_s":)" + std::to_string(step) +
           R"(,"model_flops":1.248e15,"phases":{"data_s":)" + std::to_string(data) + "}}\n";
    return s;
  };
  const std::string base = baseline("bd", with_data(1.0, 0.05));
  const std::string run = file("rd.jsonl", with_data(1.3, 0.35));
  const auto r = run_mfu("check " + run + " --baseline " + base + " --max-bucket io=40%");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("look at 'io', which grew the most per steady step"), std::string::npos)
      << r.out;
  // The io share passes its own 40% limit but grew from 5% to 26.9% against the baseline.
  EXPECT_NE(r.out.find("pass  max-bucket io"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL  baseline share of io"), std::string::npos) << r.out;
}

TEST_F(CheckVerdicts, SettingsAreTheFlagsAndTheVerdictNamesTheFile) {
  const std::string run = file("r.jsonl", native_run(50, 1.0, 1.248e15, 0.0, 71));
  // Any flag of mfu check is a setting (seq-len here), parsed by the flag's own definition.
  const std::string good = file("mfu.toml", "min-mfu = \"40%\"\nseq-len = 2048\nstrict = true\n");
  const auto r = run_mfu("check " + run + " --config " + good);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("settings: " + (dir / "mfu.toml").string()), std::string::npos) << r.out;
  // The command line wins over the file.
  EXPECT_EQ(run_mfu("check " + run + " --config " + good + " --min-mfu 60%").exit_code, 1);
  // A setting the file gets wrong is refused like the flag would be.
  const std::string bad = file("bad.toml", "min-mfu = \"40\"\n");
  EXPECT_EQ(run_mfu("check " + run + " --config " + bad).exit_code, 2);
  const std::string unknown = file("unknown.toml", "bogus = 1\n");
  const auto u = run_mfu("check " + run + " --config " + unknown + " --min-mfu 10%");
  EXPECT_EQ(u.exit_code, 2);
  EXPECT_NE(u.err.find("unknown setting 'bogus'"), std::string::npos) << u.err;
  // The example settings file of examples/ci holds only valid settings: it gives a verdict.
  const auto ex =
      run_mfu("check examples/native_run.jsonl --config examples/ci/mfu.toml --gpus 16");
  EXPECT_TRUE(ex.exit_code == 0 || ex.exit_code == 1) << ex.out << ex.err;
}

TEST(CheckExitCodes, TheTableInExamplesCiIsWhatTheBinaryDoes) {
  const std::string readme = read_file(fs::path(MFU_SOURCE_DIR) / "examples/ci/README.md");
  const auto begin = readme.find("<!-- exit-codes -->"), end = readme.find("<!-- /exit-codes -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const std::string table = readme.substr(begin, end - begin);
  const std::regex row(R"(\| (\d) \| [^|]+ \| `mfu ([^`]+)` \|)");
  int rows = 0;
  std::set<int> codes;
  for (std::sregex_iterator it(table.begin(), table.end(), row), e; it != e; ++it) {
    const int want = std::stoi((*it)[1]);
    const std::string args = (*it)[2];
    EXPECT_EQ(run_mfu(args).exit_code, want) << "mfu " << args;
    codes.insert(want);
    ++rows;
  }
  EXPECT_GE(rows, 6);
  EXPECT_EQ(codes, (std::set<int>{0, 1, 2}));
  EXPECT_NE(table.find("| 3 |"), std::string::npos);  // the bug exit is documented
}

}  // namespace
}  // namespace mfu
