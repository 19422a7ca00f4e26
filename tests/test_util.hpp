#pragma once
// Helpers for tests: run the real binary, read files, locate the shared samples.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mfu/run.hpp"

namespace mfu::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
}

/// Writes `text` to a file named `name` in the temporary directory, made unique to this process
/// (tests of one binary run in parallel processes), and returns its path. The caller removes it.
inline std::string temp_log(const std::string& name, const std::string& text) {
  const auto path =
      std::filesystem::temp_directory_path() / ("mfu_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

/// Runs `mfu ARGS` (already shell-quoted where needed) in the source directory with a time
/// bound; stdin from /dev/null
/// unless `stdin_file` is given. `env` is prepended (e.g. "NO_COLOR=1").
inline CommandResult run_mfu(const std::string& args, const std::string& env = "",
                             const std::string& stdin_file = "/dev/null", int timeout_s = 120) {
  static int counter = 0;
  const auto dir =
      std::filesystem::temp_directory_path() / ("mfu-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto out_path = dir / ("out" + std::to_string(counter));
  const auto err_path = dir / ("err" + std::to_string(counter++));
  const std::string cmd = "cd " + shell_quote(MFU_SOURCE_DIR) + " && env " + env + " timeout " +
                          std::to_string(timeout_s) + " " + MFU_BINARY_PATH + " " + args + " <" +
                          shell_quote(stdin_file) + " >" + shell_quote(out_path.string()) + " 2>" +
                          shell_quote(err_path.string());
  const int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return r;
}

inline std::filesystem::path source_dir() {
  return MFU_SOURCE_DIR;
}
inline std::filesystem::path test_data(const std::string& name) {
  return source_dir() / "tests" / "data" / name;
}

/// ../shared/samples (or $MFU_SAMPLES_DIR); empty when absent.
inline std::filesystem::path samples_dir() {
  const char* env = std::getenv("MFU_SAMPLES_DIR");
  const std::filesystem::path p = (env != nullptr && *env != '\0')
                                      ? std::filesystem::path(env)
                                      : source_dir().parent_path() / "shared" / "samples";
  return std::filesystem::is_directory(p) ? p : std::filesystem::path();
}

/// ../shared/samples-next (next to samples_dir()); empty when absent.
inline std::filesystem::path samples_next_dir() {
  const std::filesystem::path s = samples_dir();
  const std::filesystem::path p = s.empty() ? source_dir().parent_path() / "shared" / "samples-next"
                                            : s.parent_path() / "samples-next";
  return std::filesystem::is_directory(p) ? p : std::filesystem::path();
}

/// A file of ../shared/samples-next/FOLDER whose name starts with `prefix`; empty when the
/// folder (or such a file) is not there.
inline std::string next_sample(const std::string& folder, const std::string& prefix) {
  const auto root = samples_next_dir();
  if (root.empty() || !std::filesystem::is_directory(root / folder)) return "";
  for (const auto& e : std::filesystem::directory_iterator(root / folder))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return e.path().string();
  return "";
}

/// Seconds the timed records stand for (time per iteration x iterations), untimed ones skipped.
inline double timed_seconds(const Run& r) {
  double s = 0;
  for (std::size_t i = 0; i < r.iterations.size(); ++i)
    if (known(r.iterations[i].time_s)) s += r.iterations[i].time_s * r.iterations[i].count;
  return s;
}

/// The step of every record, in the table's order.
inline std::vector<std::int64_t> steps_of(const Run& r) {
  std::vector<std::int64_t> s;
  for (std::size_t i = 0; i < r.iterations.size(); ++i) s.push_back(r.iterations.step(i));
  return s;
}

/// True when one of the run's diagnostics contains `text`.
inline bool has_diagnostic(const Run& r, const std::string& text) {
  for (const auto& d : r.diagnostics)
    if (d.message.find(text) != std::string::npos) return true;
  return false;
}

/// Compares `actual` to tests/golden/NAME; rewrites the file when MFU_UPDATE_GOLDEN=1.
inline void expect_golden(const std::string& name, const std::string& actual) {
  const auto path = source_dir() / "tests" / "golden" / name;
  if (const char* u = std::getenv("MFU_UPDATE_GOLDEN"); u != nullptr && std::string(u) == "1") {
    write_file(path, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << "missing golden file " << path << " (run with MFU_UPDATE_GOLDEN=1 to create it)";
  EXPECT_EQ(read_file(path), actual)
      << "golden " << name << " differs; review and rerun with MFU_UPDATE_GOLDEN=1";
}

}  // namespace mfu::test

/// In a test body: fails with `why` when an input the test reads is missing (the shared samples,
/// or a browser, PyTorch, Dask or a tool that tools/setup.sh --with-tests installs). It never
/// skips: a skipped test passes a run without having checked anything, which hid a missing
/// samples folder behind a green run of 80 skipped tests. Without an input on purpose, leave its
/// tests out by name (`ctest -E`, `--gtest_filter=-...`), where the command shows the choice.
#define MFU_FAIL_WITHOUT_INPUT(why)                                                             \
  GTEST_FAIL() << (why)                                                                         \
               << " (set MFU_SAMPLES_DIR for the samples, run tools/setup.sh --with-tests for " \
                  "the rest, or leave this test out by name)"
