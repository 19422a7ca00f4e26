// Runs the binary on every file of tests/corpus (and on inputs made here that cannot be
// committed) and checks the outcome its name states: fail_* exits 2 with an error and a hint,
// warn_* exits 0 with a report and a warning. Every run has a time limit: a hang fails.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_util.hpp"

namespace mfu {
namespace {

namespace fs = std::filesystem;

void expect_outcome(const fs::path& input, const std::string& name) {
  SCOPED_TRACE(name);
  const auto r = test::run_mfu("analyze " + test::shell_quote(input.string()) + " --peak 1000T", "",
                               "/dev/null", 60);
  if (name.rfind("fail_", 0) == 0) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("error:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("hint:"), std::string::npos) << r.err;
  } else if (name.rfind("warn_", 0) == 0) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(r.out.empty());
    EXPECT_NE(r.err.find("warning:"), std::string::npos) << r.err;
  } else {
    ADD_FAILURE() << "corpus file names start with fail_ or warn_";
  }
}

TEST(Corpus, EveryFileHasTheOutcomeItsNameStates) {
  const fs::path dir = fs::path(MFU_SOURCE_DIR) / "tests/corpus";
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == "README.md" || e.path().extension() == ".cpp") continue;
    expect_outcome(e.path(), name);
    ++n;
  }
  EXPECT_GE(n, 15u);
}

TEST(Corpus, GeneratedInputs) {
  const fs::path dir = fs::temp_directory_path() / ("mfu-corpus-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string meta = R"({"type":"meta","gpus":16})"
                           "\n";
  const std::string rec = R"({"step":1,"time_s":0.33,"model_flops":3.5e13})"
                          "\n";
  const std::string rec2 = R"({"step":2,"time_s":0.33,"model_flops":3.5e13})"
                           "\n";
  const std::string big(200u << 20, 'a');
  { std::ofstream(dir / "fail_single_200mb_line.log", std::ios::binary) << big; }
  expect_outcome(dir / "fail_single_200mb_line.log", "fail_single_200mb_line.log");
  {
    std::ofstream(dir / "warn_200mb_line_between_records.jsonl", std::ios::binary)
        << meta << rec << big << "\n"
        << rec2;
  }
  expect_outcome(dir / "warn_200mb_line_between_records.jsonl",
                 "warn_200mb_line_between_records.jsonl");
  fs::remove(dir / "fail_single_200mb_line.log");
  fs::remove(dir / "warn_200mb_line_between_records.jsonl");

  // A directory with a log, a link to nothing and a pipe (reading a pipe would block).
  const fs::path unread = dir / "warn_dir_with_unreadable_files";
  fs::create_directories(unread);
  test::write_file(unread / "run.jsonl", meta + rec + rec2);
  fs::create_symlink("/nonexistent/mfu/file.log", unread / "broken.log");
  ASSERT_EQ(::mkfifo((unread / "pipe.log").c_str(), 0600), 0);
  expect_outcome(unread, "warn_dir_with_unreadable_files");

  // The same rank twice.
  const fs::path dup = dir / "warn_duplicate_ranks";
  fs::create_directories(dup);
  test::write_file(dup / "rank0.jsonl",
                   meta +
                       R"({"step":1,"time_s":0.33,"model_flops":3.5e13,"rank":0})"
                       "\n" +
                       R"({"step":2,"time_s":0.33,"model_flops":3.5e13,"rank":0})"
                       "\n");
  fs::copy_file(dup / "rank0.jsonl", dup / "rank0_again.jsonl");
  expect_outcome(dup, "warn_duplicate_ranks");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mfu
