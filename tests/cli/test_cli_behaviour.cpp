// Issue 18, a CLI that behaves: completions and a manual page from the CLI's own definitions,
// an unknown command named as such with every near guess, a progress line on terminals only,
// -v for the info messages, units required where a bare number is a guess, and JSON numbers
// as they are meant.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.hpp"

namespace mfu {
namespace {

namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("mfu-cli-" + std::to_string(::getpid()) + "-" + name);
}

// Bash really completes with the generated function: "mfu ana" gives analyze, "mfu analyze
// --gp" gives --gpu and --gpus.
TEST(Completions, BashCompletesCommandsAndFlags) {
  const auto r = test::run_mfu("completions bash");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path file = temp_path("mfu.bash");
  test::write_file(file, r.out);
  auto complete = [&](const std::string& words, int cword) {
    const std::string cmd =
        "bash -c " + test::shell_quote("source " + file.string() + "; COMP_WORDS=(" + words +
                                       "); COMP_CWORD=" + std::to_string(cword) +
                                       "; _mfu; echo \"${COMPREPLY[*]}\"");
    FILE* p = ::popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    while (p && std::fgets(buf, sizeof buf, p)) out += buf;
    if (p) ::pclose(p);
    return out;
  };
  EXPECT_EQ(complete("mfu ana", 1), "analyze\n");
  const std::string flags = complete("mfu analyze --gp", 2);
  EXPECT_NE(flags.find("--gpu"), std::string::npos) << flags;
  EXPECT_NE(flags.find("--gpus"), std::string::npos) << flags;
  EXPECT_EQ(flags.find("--min-mfu"), std::string::npos) << flags;  // a check flag
  fs::remove(file);
}

TEST(Completions, ZshAndFishNameEveryCommand) {
  for (const char* shell : {"zsh", "fish"}) {
    const auto r = test::run_mfu(std::string("completions ") + shell);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* c : {"calc", "analyze", "check", "whatif", "inspect", "gpus", "models"})
      EXPECT_NE(r.out.find(c), std::string::npos) << shell << " " << c;
  }
  EXPECT_NE(test::run_mfu("completions zsh").out.find("#compdef mfu"), std::string::npos);
  EXPECT_NE(test::run_mfu("completions fish").out.find("-l min-mfu"), std::string::npos);
  EXPECT_EQ(test::run_mfu("completions tcsh").exit_code, 2);
}

// The manual page is valid roff that man renders: every command has a section and the flags
// of analyze are listed.
TEST(ManPage, RendersWithEveryCommand) {
  const auto r = test::run_mfu("man");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {".TH MFU 1", ".SH COMMANDS", ".SS analyze", ".SS check", ".SH EXIT STATUS",
                        "\\-\\-min\\-mfu"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  if (std::system("command -v groff >/dev/null 2>&1") != 0)
    MFU_FAIL_WITHOUT_INPUT("no groff (tools/setup.sh --with-tests installs groff-base)");
  const fs::path page = temp_path("mfu.1");
  test::write_file(page, r.out);
  const std::string cmd = "groff -man -Tutf8 -ww " + page.string() + " 2>&1 >/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string warnings;
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) warnings += buf;
  const int status = p ? ::pclose(p) : -1;
  EXPECT_EQ(status, 0);
  EXPECT_EQ(warnings, "") << warnings;
  fs::remove(page);
}

TEST(CliErrors, AnUnknownCommandIsNamedWithEveryNearGuess) {
  const auto r = test::run_mfu("analyse examples/megatron-deepspeed_gpt3-125m_8gpu.log");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command 'analyse'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("A subcommand is required"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'mfu analyze'?"), std::string::npos) << r.err;
  // "--gpux" is one edit from both --gpu and --gpus: both are named.
  const auto tie = test::run_mfu("analyze examples/megatron-deepspeed_gpt3-125m_8gpu.log --gpux 8");
  EXPECT_EQ(tie.exit_code, 2);
  EXPECT_NE(tie.err.find("--gpu"), std::string::npos) << tie.err;
  EXPECT_NE(tie.err.find("--gpus"), std::string::npos) << tie.err;
  EXPECT_NE(tie.err.find(" or "), std::string::npos) << tie.err;
  // A global option's value is not taken for a command.
  const auto ok = test::run_mfu("--color never gpus h100-sxm");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// Piped (as in CI), stderr never sees a progress line; -v shows what each input is read as.
TEST(Progress, SilentWhenPipedAndVerboseShowsInfo) {
  const std::string log = "examples/megatron-deepspeed_gpt3-125m_8gpu.log";
  const auto quiet = test::run_mfu("analyze " + log + " --gpu a100");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("reading"), std::string::npos) << quiet.err;
  const auto verbose = test::run_mfu("-v analyze " + log + " --gpu a100");
  ASSERT_EQ(verbose.exit_code, 0) << verbose.err;
  EXPECT_NE(verbose.err.find("reading " + log + " as megatron"), std::string::npos) << verbose.err;
}

// On a terminal (a pseudo-terminal from script(1)), an input that takes more than a second to
// read shows the progress line: stdin here is a pipe fed for two seconds.
TEST(Progress, ATerminalSeesAProgressLineForSlowInputs) {
  if (std::system("command -v script >/dev/null 2>&1") != 0)
    MFU_FAIL_WITHOUT_INPUT("no script(1) (Debian's bsdutils has it)");
  const fs::path log = test::source_dir() / "examples/megatron-deepspeed_gpt3-125m_8gpu.log";
  const fs::path typescript = temp_path("typescript");
  const std::string inner = "(cat " + test::shell_quote(log.string()) + "; sleep 2) | " +
                            std::string(MFU_BINARY_PATH) + " analyze - --gpu a100 >/dev/null";
  const std::string cmd = "timeout 60 script -q -e -c " + test::shell_quote(inner) + " " +
                          test::shell_quote(typescript.string()) + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string seen = test::read_file(typescript);
  EXPECT_NE(seen.find("mfu: reading"), std::string::npos) << seen.substr(0, 400);
  fs::remove(typescript);
}

TEST(Units, BareNumbersAreRefusedWhereTheUnitIsAGuess) {
  // 330 what: seconds or milliseconds? 19.5 FLOP/s or TFLOP/s?
  const auto t = test::run_mfu("calc --flops 35T --step-time 330 --gpus 16 --gpu h100-sxm");
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("'330'"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("no unit"), std::string::npos) << t.err;
  const auto p = test::run_mfu("calc --flops 35T --step-time 330ms --gpus 16 --peak 19.5");
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("'19.5'"), std::string::npos) << p.err;
  // TF, TFLOPS and TFLOP/s alike: 35e12 / (0.33 x 16 x 19.5e12) = 34.0%.
  for (const char* peak : {"19.5T", "19.5TF", "19.5 TFLOPS", "19.5TFLOP/s", "19.5 tflop/s"}) {
    const auto ok = test::run_mfu("calc --flops 35T --step-time 330ms --gpus 16 --peak " +
                                  test::shell_quote(peak));
    EXPECT_EQ(ok.exit_code, 0) << peak << ": " << ok.err;
    EXPECT_NE(ok.out.find("34.0%"), std::string::npos) << peak << ": " << ok.out;
  }
}

// gpus is an integer, costs name their currency, the loss carries a float's digits.
TEST(JsonNumbers, CountsAreIntegersAndFloatsHaveNoNoise) {
  const auto c = test::run_mfu(
      "calc --flops 35T --step-time 330ms --gpus 16 --gpu h100-sxm --train-tokens 1T "
      "--price-per-gpu-hour 2.5 --tokens-per-step 1M --output json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("\"gpus\": 16,"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("\"cost_usd\""), std::string::npos) << c.out;
  const fs::path log = temp_path("loss.jsonl");
  test::write_file(log,
                   "{\"type\":\"meta\",\"gpus\":8,\"gpu\":\"h100-sxm\"}\n"
                   "{\"step\":1,\"time_s\":1.0,\"model_flops\":2e15,\"loss\":0.29823}\n"
                   "{\"step\":2,\"time_s\":1.0,\"model_flops\":2e15,\"loss\":0.29823}\n");
  const auto a = test::run_mfu("analyze " + log.string() + " --output json --per-iteration");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("\"loss\": 0.29823"), std::string::npos) << a.out;
  EXPECT_EQ(a.out.find("0.2982299"), std::string::npos);
  EXPECT_NE(a.out.find("\"gpus\": 8,"), std::string::npos);
  fs::remove(log);
}

// check --output html: the verdict over the whole report, the baseline's median and step-time
// histogram drawn over the run's.
TEST(CheckHtml, DrawsTheBaselineOverTheRun) {
  const std::string log = "examples/megatron-deepspeed_gpt3-125m_8gpu.log";
  const fs::path base = temp_path("baseline.json");
  ASSERT_EQ(
      test::run_mfu("analyze " + log + " --gpu a100 --output json -o " + base.string()).exit_code,
      0);
  const auto r =
      test::run_mfu("check " + log + " --gpu a100 --baseline " + base.string() + " --output html");
  ASSERT_NE(r.exit_code, 2) << r.err;
  EXPECT_NE(r.out.find("id=\"verdict\""), std::string::npos);
  EXPECT_NE(r.out.find("id=\"checks\""), std::string::npos);
  EXPECT_NE(r.out.find("baseline median"), std::string::npos);
  EXPECT_NE(r.out.find("FLOPs per token"), std::string::npos);
  EXPECT_GE(std::count(r.out.begin(), r.out.end(), '\n'), 50);
  EXPECT_NE(r.out.find("class=\"baseline\""), std::string::npos);
  fs::remove(base);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// A Megatron-style log prints one line per 10 iterations: each CSV row is that record, its
// time, tokens and FLOPs the whole record's. By hand: 10 iterations of 0.5 s are 5 s; 65,536
// tokens and 2e15 FLOPs an iteration are 655,360 and 2e16; MFU 2e15 / (0.5 x 8 x 989.5e12) =
// 0.50531.
TEST(Csv, EachRowIsOneRecordAndItsValuesAreTheRecords) {
  const auto log =
      std::filesystem::temp_directory_path() / ("mfu-csv-" + std::to_string(::getpid()) + ".jsonl");
  std::string text = "{\"type\":\"meta\",\"gpus\":8,\"gpu\":\"h100-sxm\"}\n";
  for (int s = 10; s <= 60; s += 10)
    text += fmt::format(
        "{{\"step\":{},\"count\":10,\"time_s\":0.5,\"tokens\":65536,\"model_flops\":2e15,"
        "\"comm_s\":0.05,\"loss\":2.{}}}\n",
        s, s);
  test::write_file(log, text);
  const auto r = test::run_mfu("analyze " + log.string() + " --output csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "step,iterations,time_s,mfu,tokens,model_flops,loss,stall,comm_s");
  EXPECT_NE(r.out.find("\n20,10,5,0.505"), std::string::npos) << r.out;
  // The loss is the record's own (step 60: "2.60"), though the analysis never reads it.
  EXPECT_NE(r.out.find(",655360,2e+16,2.6,0,0.5\n"), std::string::npos) << r.out;
  std::filesystem::remove(log);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// "b200" is a family: the note names the other part it could mean (the GB200 superchip's
// Blackwell), as "h100" names the PCIe and NVL cards.
TEST(GpuLookup, AFamilyNameListsThePartsItCouldMean) {
  const auto b = test::run_mfu("gpus b200");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("--gpu gb200"), std::string::npos) << b.out;
  const auto h = test::run_mfu("gpus h100");
  EXPECT_NE(h.out.find("--gpu h100-pcie or --gpu h100-nvl"), std::string::npos) << h.out;
}

}  // namespace
}  // namespace mfu
