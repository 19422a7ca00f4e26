// The real binary: exit codes, golden outputs, files it writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.hpp"

namespace mfu {
namespace {

using test::run_mfu;

TEST(Cli, VersionAndHelpExitZero) {
  EXPECT_EQ(run_mfu("--version").exit_code, 0);
  const auto h = run_mfu("--help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("Exit codes"), std::string::npos);
  for (const char* sub :
       {"calc", "analyze", "check", "whatif", "gpus", "models", "inspect", "convert"}) {
    const auto r = run_mfu(std::string(sub) + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub;
    EXPECT_NE(r.out.find("Example"), std::string::npos) << sub << " help has no examples";
  }
}

TEST(Cli, BadUsageExitsTwoWithAMessage) {
  EXPECT_EQ(run_mfu("").exit_code, 2);
  const auto r = run_mfu("calc --no-such-flag");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("mfu: error:"), std::string::npos);
  EXPECT_EQ(run_mfu("frobnicate").exit_code, 2);
  EXPECT_EQ(run_mfu("calc --step-time 35T --flops 35T --gpus 16 --peak 19.5T").exit_code,
            2);  // wrong kind
}

TEST(Cli, CalcClassicExampleGolden) {
  const auto r = run_mfu("calc --flops 35T --step-time 330ms --gpus 16 --peak 19.5T");
  EXPECT_EQ(r.exit_code, 0);
  test::expect_golden("calc_classic.txt", r.out);
  const auto cut =
      run_mfu("calc --flops 35T --step-time 290ms --gpus 16 --peak 19.5T --output json");
  EXPECT_EQ(cut.exit_code, 0);
  EXPECT_NE(cut.out.find("\"mfu\": 0.3868"), std::string::npos) << cut.out;
}

TEST(Cli, CalcRefusesTheImpossibleWithAHint) {
  const auto r = run_mfu("calc --flops 350T --step-time 330ms --gpus 16 --peak 19.5T");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("impossible"), std::string::npos);
  EXPECT_NE(r.err.find("hint:"), std::string::npos);
}

TEST(Cli, CalcPalmJsonGolden) {
  const auto r = run_mfu(
      "calc --params 540.35B --layers 118 --heads 48 --head-dim 256 --hidden 18432 --seq-len 2048 "
      "--gpu tpu-v4 "
      "--gpus 6144 --tokens-per-sec 238.3k --output json");
  EXPECT_EQ(r.exit_code, 0);
  test::expect_golden("calc_palm.json", r.out);
}

TEST(Cli, CalcTrainingBudgetAndCost) {
  const auto r = run_mfu(
      "calc --model llama3-8b --gpu h100 --gpus 64 --tokens-per-sec 1M --train-tokens 15T "
      "--price-per-gpu-hour 2.5 "
      "--output json");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* key : {"\"train_time_s\"", "\"gpu_hours\"", "\"cost_usd\"", "\"energy_kwh\"",
                          "\"schema_version\""})
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
}

TEST(Cli, GpusListAndLookupGolden) {
  const auto list = run_mfu("gpus");
  EXPECT_EQ(list.exit_code, 0);
  test::expect_golden("gpus.txt", list.out);
  const auto one = run_mfu("gpus 'NVIDIA H100 80GB HBM3' --output json");
  EXPECT_EQ(one.exit_code, 0);
  test::expect_golden("gpus_h100.json", one.out);
  const auto bad = run_mfu("gpus h300");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("closest"), std::string::npos);
}

TEST(Cli, ModelsGolden) {
  const auto r = run_mfu("models");
  EXPECT_EQ(r.exit_code, 0);
  test::expect_golden("models.txt", r.out);
}

TEST(Cli, AnalyzeTheBundledExampleInEveryFormat) {
  const std::string log = "examples/megatron-deepspeed_gpt3-125m_8gpu.log --gpu a100-sxm4-40gb";
  const auto text = run_mfu("analyze " + log, "NO_COLOR=1");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos);  // no colour off a terminal
  test::expect_golden("analyze_example.txt", text.out);
  for (const char* fmt : {"json", "markdown", "csv", "html"}) {
    const auto r = run_mfu("analyze " + log + " --output " + fmt);
    EXPECT_EQ(r.exit_code, 0) << fmt << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << fmt;
  }
  const auto coloured = run_mfu("--color always analyze " + log);
  EXPECT_NE(coloured.out.find('\x1b'), std::string::npos);
}

TEST(Cli, HtmlReportIsSelfContained) {
  const auto r =
      run_mfu("analyze examples/megatron-deepspeed_gpt3-125m_8gpu.log --gpu a100 --output html");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find("<script"), std::string::npos);
  EXPECT_EQ(r.out.find("src=\"http"), std::string::npos);
  EXPECT_EQ(r.out.find("href=\"http"), std::string::npos);
  EXPECT_NE(r.out.find("<svg id=\"steptime\""), std::string::npos);
  EXPECT_NE(r.out.find("<svg id=\"waterfall\""), std::string::npos);
  EXPECT_NE(r.out.find("<path d=\"M"), std::string::npos);  // the chart has a line
}

TEST(Cli, UnreadableAndUnknownInputsExitTwo) {
  const auto missing = run_mfu("analyze /nonexistent/run.log");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/run.log"), std::string::npos);
  const auto unknown = run_mfu("analyze README.md");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("formats tried"), std::string::npos);
}

TEST(Cli, StdinIsReadWithDash) {
  const auto r =
      run_mfu("inspect -", "", (test::source_dir() / "tests/data/nanogpt_mfu.log").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("format      nanogpt"), std::string::npos);
}

TEST(Cli, OutputFileIsWrittenAtomicallyAndKeptOnFailure) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("mfu-cli-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "report.json").string();
  EXPECT_EQ(run_mfu("analyze examples/native_run.jsonl --output json -o " + out).exit_code, 0);
  const std::string first = test::read_file(out);
  EXPECT_NE(first.find("\"schema_version\""), std::string::npos);
  EXPECT_EQ(run_mfu("analyze /nonexistent.log --output json -o " + out).exit_code, 2);
  EXPECT_EQ(test::read_file(out), first);  // the previous report is intact
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".mfu-tmp"), std::string::npos)
        << "temporary left behind";
  std::filesystem::remove_all(dir);
}

TEST(Cli, CheckExitCodesJunitAndGithubOutputs) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("mfu-check-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string log = "examples/native_run.jsonl";
  EXPECT_EQ(run_mfu("check " + log + " --min-mfu 30%").exit_code, 0);
  const std::string junit = (dir / "junit.xml").string();
  const std::string summary = (dir / "summary.md").string();
  const auto fail = run_mfu("check " + log + " --min-mfu 60% --junit " + junit,
                            "GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=" + summary);
  EXPECT_EQ(fail.exit_code, 1);
  // Annotations go to stderr: stdout holds only the report.
  EXPECT_NE(fail.err.find("::error title=mfu check min-mfu::"), std::string::npos);
  EXPECT_EQ(fail.out.find("::"), std::string::npos);
  EXPECT_NE(test::read_file(junit).find("<failure"), std::string::npos);
  EXPECT_NE(test::read_file(summary).find("## mfu check: **failed**"), std::string::npos);
  EXPECT_EQ(run_mfu("check /nonexistent.log --min-mfu 30%").exit_code, 2);
  EXPECT_EQ(run_mfu("check " + log + " --max-bucket comm").exit_code, 2);  // NAME=LIMIT needed
  // A baseline saved by analyze, and the settings file.
  const std::string base = (dir / "base.json").string();
  EXPECT_EQ(run_mfu("analyze " + log + " --output json -o " + base).exit_code, 0);
  EXPECT_EQ(run_mfu("check " + log + " --baseline " + base).exit_code, 0);
  test::write_file(dir / "mfu.toml", "[check]\nmin-mfu = \"99%\"  # too high\n");
  EXPECT_EQ(run_mfu("check " + log + " --config " + (dir / "mfu.toml").string()).exit_code, 1);
  EXPECT_EQ(run_mfu("check " + log + " --config " + (dir / "mfu.toml").string() + " --min-mfu 10%")
                .exit_code,
            0);
  test::write_file(dir / "bad.toml", "min-mfu 40%\n");
  const auto bad = run_mfu("check " + log + " --config " + (dir / "bad.toml").string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad.toml:1"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Cli, ConvertRoundTrips) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("mfu-conv-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "run.jsonl").string();
  EXPECT_EQ(run_mfu("convert tests/data/megatron_megads_excerpt.log -o " + out).exit_code, 0);
  const auto a = run_mfu("inspect --output json tests/data/megatron_megads_excerpt.log");
  const auto b = run_mfu("inspect --output json " + out);
  EXPECT_NE(b.out.find("\"records\": 10"), std::string::npos) << b.out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

TEST(Cli, WhatifClassicExampleGolden) {
  // 330 ms (forward 100, backward 150, sync 80) on 16 GPUs of 19.5 TFLOP/s, 35 TFLOP per step:
  // halving the sync gives 290 ms and MFU 34.0% -> 38.7%.
  const auto r = test::run_mfu("whatif examples/classic_330ms.jsonl --peak 19.5T --comm 0.5x");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("290 ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("38.7%"), std::string::npos) << r.out;
  test::expect_golden("whatif_classic.txt", r.out);
  const auto j =
      test::run_mfu("whatif examples/classic_330ms.jsonl --peak 19.5T --comm 0.5x --output json");
  EXPECT_EQ(j.exit_code, 0) << j.err;
  EXPECT_NE(j.out.find("\"mfu\": 0.3868"), std::string::npos) << j.out;
}

TEST(Cli, WhatifAnalyticalAndCluster) {
  const auto e = test::run_mfu(
      "whatif --model llama3-70b --gpu h100 --gpus 1024 --tp 8 --pp 8 --micro-batches 32 "
      "--batch 1024 "
      "--seq-len 8192 --checkpoint-time 60s --mtbf 24h --output markdown");
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("pipeline bubble"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("Daly"), std::string::npos) << e.out;
  const auto c =
      test::run_mfu("whatif cluster --nodes 2 --gpus-per-node 8 --jobs examples/jobs.csv");
  EXPECT_EQ(c.exit_code, 0) << c.err;
  test::expect_golden("whatif_cluster.txt", c.out);
}

// Issue 18: --gpu/--gpus/--peak describe the run in every subcommand (copied from an analyze
// line they work in whatif); a change is --to-*; the old spellings are answered with the new
// ones; the estimate's global batch is --batch, as in calc.
TEST(Cli, WhatifFlagsMeanWhatAnalyzeMeans) {
  // The classic run at twice the peak: compute 250 ms -> 125 ms, sync 80 ms stays: 205 ms.
  const auto faster =
      test::run_mfu("whatif examples/classic_330ms.jsonl --peak 19.5T --to-peak 39T");
  EXPECT_EQ(faster.exit_code, 0) << faster.err;
  EXPECT_NE(faster.out.find("205 ms"), std::string::npos) << faster.out;
  for (const auto& [old, now] :
       {std::pair{"--run-peak 19.5T", "--peak"}, std::pair{"--run-gpu a100", "--gpu"},
        std::pair{"--run-gpus 16", "--gpus"}}) {
    const auto r =
        test::run_mfu(std::string("whatif examples/classic_330ms.jsonl --comm 0.5x ") + old);
    EXPECT_EQ(r.exit_code, 2) << old;
    EXPECT_NE(r.err.find(std::string("is now ") + now), std::string::npos) << r.err;
  }
  const auto batch =
      test::run_mfu("whatif --model llama3-8b --gpu h100 --gpus 8 --global-batch 8 --seq-len 8192");
  EXPECT_EQ(batch.exit_code, 2);
  EXPECT_NE(batch.err.find("--global-batch is now --batch"), std::string::npos) << batch.err;
  const auto target = test::run_mfu(
      "whatif --model llama3-8b --gpu h100 --gpus 8 --batch 8 --seq-len 8192 --to-gpu h200");
  EXPECT_EQ(target.exit_code, 2);
  EXPECT_NE(target.err.find("--to-gpu changes a measured run"), std::string::npos) << target.err;
}

TEST(Cli, WhatifUsageErrorsExitTwo) {
  // A layout flag with a log, a bad scale, an unknown accelerator, a missing trace.
  for (const char* args :
       {"whatif examples/classic_330ms.jsonl --peak 19.5T --tp 8",
        "whatif examples/classic_330ms.jsonl --peak 19.5T --comm fast",
        "whatif examples/classic_330ms.jsonl --peak 19.5T --to-gpu h1000",
        "whatif cluster --nodes 2 --jobs /nonexistent/jobs.csv",
        "whatif --model llama3-8b --gpu h100 --gpus 7 --tp 2 --batch 8 --seq-len 8192"}) {
    const auto r = test::run_mfu(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.err.find("error"), std::string::npos) << args;
  }
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

TEST(Cli, FollowReadsAppendedLinesAndReportsOnInterrupt) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("mfu-follow-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path log = dir / "run.jsonl", out = dir / "final.json", script = dir / "follow.sh";
  auto lines = [](int from, int to) {
    std::string s;
    for (int i = from; i <= to; ++i)
      s += R"({"step":)" + std::to_string(i) +
           R"(,"time_s":0.33,"model_flops":3.5e13})"
           "\n";
    return s;
  };
  test::write_file(log, R"({"type":"meta","gpus":16})"
                        "\n" +
                            lines(1, 5));
  // Start following, append five lines and half a line, then interrupt: the final report has
  // the ten complete iterations.
  test::write_file(script, "set -e\n" + std::string(MFU_BINARY_PATH) + " analyze --follow " +
                               log.string() + " --peak 19.5T --interval 0.2 --output json -o " +
                               out.string() + " 2>/dev/null &\npid=$!\nsleep 1\nprintf '%s' '" +
                               lines(6, 10) + "{\"step\":11,\"ti' >> " + log.string() +
                               "\nsleep 1\nkill -INT $pid\nwait $pid\n");
  const int status = std::system(("timeout 30 sh " + script.string()).c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string report = test::read_file(out);
  const auto j = nlohmann::json::parse(report);
  EXPECT_EQ(j["iterations"]["total"], 10) << report.substr(0, 400);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

/// The HTML report rendered by a real browser (headless Chromium, when installed: the CI
/// set-up installs it) at a narrow and a wide window: the page loads, its charts are in the
/// rendered document, a screenshot is produced, and nothing overflows sideways. The page has
/// no scripts; a copy with one that records the document's scrollWidth is what is measured.
TEST(Cli, HtmlReportRendersInAHeadlessBrowser) {
  namespace fs = std::filesystem;
  std::string browser;
  for (const char* b : {"chromium", "chromium-browser", "google-chrome"}) {
    if (std::system((std::string("command -v ") + b + " >/dev/null 2>&1").c_str()) == 0) {
      browser = b;
      break;
    }
  }
  if (browser.empty())
    MFU_FAIL_WITHOUT_INPUT(
        "no headless browser installed (tools/setup.sh --with-tests installs chromium)");
  const fs::path dir = fs::temp_directory_path() / ("mfu-html-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path html = dir / "report.html", measured = dir / "measured.html";
  const auto r = test::run_mfu(
      "analyze examples/megatron-deepspeed_gpt3-125m_8gpu.log --gpu a100 --output html -o " +
      test::shell_quote(html.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string page = test::read_file(html);
  const std::string probe =
      "<script>document.body.setAttribute('data-overflow', String("
      "document.documentElement.scrollWidth - window.innerWidth));</script>";
  page.insert(page.rfind("</body>"), probe);
  test::write_file(measured, page);
  for (int width : {800, 1400}) {
    const fs::path png = dir / ("report-" + std::to_string(width) + ".png");
    const fs::path dom = dir / ("dom-" + std::to_string(width) + ".html");
    const std::string flags =
        " --headless --no-sandbox --disable-gpu --hide-scrollbars "
        "--window-size=" +
        std::to_string(width) + ",3000 ";
    ASSERT_EQ(std::system(("timeout 120 " + browser + flags + "--screenshot=" + png.string() +
                           " file://" + html.string() + " >/dev/null 2>&1")
                              .c_str()),
              0);
    ASSERT_EQ(std::system(("timeout 120 " + browser + flags + "--dump-dom file://" +
                           measured.string() + " >" + dom.string() + " 2>/dev/null")
                              .c_str()),
              0);
    ASSERT_TRUE(fs::exists(png));
    EXPECT_GT(fs::file_size(png), 20000u) << width;  // a page with charts, not a blank one
    const std::string rendered = test::read_file(dom);
    for (const char* id : {"id=\"steptime\"", "id=\"waterfall\"", "id=\"histogram\""})
      EXPECT_NE(rendered.find(id), std::string::npos) << width << " " << id;
    EXPECT_NE(rendered.find("MFU 2.3%"), std::string::npos);
    EXPECT_NE(rendered.find("data-overflow=\"0\""), std::string::npos)
        << width << " px: the page is wider than the window ("
        << rendered.substr(rendered.find("data-overflow"), 24) << ")";
  }
  // MFU_KEEP_SCREENSHOTS=DIR keeps them for a look.
  if (const char* keep = std::getenv("MFU_KEEP_SCREENSHOTS"); keep && *keep)
    for (int width : {800, 1400})
      fs::copy_file(dir / ("report-" + std::to_string(width) + ".png"),
                    fs::path(keep) / ("report-" + std::to_string(width) + ".png"),
                    fs::copy_options::overwrite_existing);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// A preset with a changed hidden size keeps nothing that followed from the old one: GPT-3's
// FFN of 4h becomes 4 x 2304 = 9216, and 24 layers give 12 x 24 x 2304^2 = 1.529B in the
// layers, plus the 50,257 x 2304 embedding (115.8M) and 2,048 x 2304 positions (4.7M): 1.65B
// (the preset's FFN of 49,152 gave 6.07B).
TEST(Cli, APresetWithAChangedHiddenSizeScalesItsMlp) {
  const auto r = test::run_mfu(
      "calc --model gpt3-175b --layers 24 --hidden 2304 --heads 24 --tokens-per-sec 10k --gpus 8 "
      "--gpu h100-sxm");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1.65B"), std::string::npos) << r.out;
}

// The PaLM 540B row of Table 3 from the command line: 46.2%.
TEST(Cli, CalcReproducesPalm540bFromLayersHeadsAndHeadDim) {
  const auto r = test::run_mfu(
      "calc --params 540.35B --layers 118 --heads 48 --head-dim 256 --seq-len 2048 "
      "--tokens-per-sec 238.3k --gpus 6144 --gpu tpu-v4");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("46.2%"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("omitted"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace mfu
