// Issue 18, safety of outputs: -o never replaces a device or FIFO, never overwrites an input,
// refuses a read-only target and keeps a writable target's mode; a failed write to stdout is
// exit 2; a bad -o path is said before the work (also with --follow).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test_util.hpp"

namespace mfu {
namespace {
namespace fs = std::filesystem;

/// A scratch folder with a copy of the classic example log as run.jsonl.
struct Scratch {
  fs::path dir;
  Scratch() {
    dir = fs::temp_directory_path() / ("mfu-out-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(test::source_dir() / "examples/classic_330ms.jsonl", dir / "run.jsonl");
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  [[nodiscard]] std::string path(const std::string& name) const { return (dir / name).string(); }
  [[nodiscard]] test::CommandResult analyze_to(const std::string& target) const {
    return test::run_mfu("analyze " + test::shell_quote(path("run.jsonl")) + " --peak 19.5T -o " +
                         test::shell_quote(target));
  }
};

mode_t mode_of(const std::string& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode;
}

TEST(OutputSafety, AnOutputThatIsAnInputIsRefused) {
  const Scratch s;
  const auto before = fs::file_size(s.path("run.jsonl"));
  for (const std::string& same : {s.path("run.jsonl"), (s.dir / "." / "run.jsonl").string()}) {
    const auto r = s.analyze_to(same);
    EXPECT_EQ(r.exit_code, 2) << same;
    EXPECT_NE(r.err.find("is one of the inputs"), std::string::npos) << r.err;
  }
  EXPECT_EQ(fs::file_size(s.path("run.jsonl")), before);  // the log is untouched
}

TEST(OutputSafety, DevicesAndFifosAreWrittenThroughNotReplaced) {
  const Scratch s;
  const auto null = s.analyze_to("/dev/null");
  EXPECT_EQ(null.exit_code, 0) << null.err;
  EXPECT_TRUE(S_ISCHR(mode_of("/dev/null")));
  const std::string fifo = s.path("report.fifo"), got = s.path("got.txt");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string reader =
      "timeout 20 cat " + test::shell_quote(fifo) + " > " + test::shell_quote(got) + " &";
  ASSERT_EQ(std::system(reader.c_str()), 0);
  const auto r = s.analyze_to(fifo);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(S_ISFIFO(mode_of(fifo)));  // still a FIFO, not a regular file in its place
  for (int i = 0; i < 100 && test::read_file(got).find("MFU") == std::string::npos; ++i)
    ::usleep(50000);
  EXPECT_NE(test::read_file(got).find("MFU"), std::string::npos);
}

TEST(OutputSafety, ReadOnlyTargetsAreRefusedAndModesKept) {
  const Scratch s;
  const std::string ro = s.path("ro.txt"), keep = s.path("keep.txt");
  std::ofstream(ro) << "old\n";
  std::ofstream(keep) << "old\n";
  ::chmod(ro.c_str(), 0444);
  ::chmod(keep.c_str(), 0640);
  const auto r = s.analyze_to(ro);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("read-only"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_file(ro), "old\n");
  EXPECT_EQ(mode_of(ro) & 0777, 0444U);
  const auto k = s.analyze_to(keep);
  EXPECT_EQ(k.exit_code, 0) << k.err;
  EXPECT_NE(test::read_file(keep).find("MFU"), std::string::npos);
  EXPECT_EQ(mode_of(keep) & 0777, 0640U);  // the report keeps the target's mode
}

TEST(OutputSafety, AFailedWriteToStdoutExitsTwo) {
  // /dev/full fails every write with ENOSPC (Linux).
  for (const char* args : {"gpus", "analyze examples/classic_330ms.jsonl --peak 19.5T"}) {
    const std::string cmd = "cd " + test::shell_quote(MFU_SOURCE_DIR) + " && " + MFU_BINARY_PATH +
                            " " + args + " > /dev/full 2>/dev/null";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << args;
    EXPECT_EQ(WEXITSTATUS(status), 2) << args;
  }
  // A reader that stops early (| head) is not a failure.
  const std::string piped = "cd " + test::shell_quote(MFU_SOURCE_DIR) + " && " + MFU_BINARY_PATH +
                            " gpus 2>&1 | head -1 >/dev/null; exit ${PIPESTATUS[0]}";
  const int status = std::system(("bash -c " + test::shell_quote(piped)).c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(OutputSafety, ABadOutputPathFailsBeforeTheWork) {
  // --follow would wait for Ctrl-C before writing; the path is checked first.
  const auto r = test::run_mfu(
      "analyze examples/classic_330ms.jsonl --peak 19.5T --follow -o /nonexistent/dir/x.txt", "",
      "/dev/null", 20);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
  const auto w = test::run_mfu(
      "whatif examples/classic_330ms.jsonl --peak 19.5T --comm 0.5x -o /nonexistent/dir/x.txt");
  EXPECT_EQ(w.exit_code, 2);
  EXPECT_NE(w.err.find("cannot write"), std::string::npos) << w.err;
}

}  // namespace
}  // namespace mfu
