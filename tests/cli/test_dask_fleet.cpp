// Issue 20, past one machine: examples/fleet/dask_fleet.py maps `mfu analyze --output summary`
// over the jobs on a Dask LocalCluster of two worker processes and reduces with `mfu merge`;
// the line must equal `mfu fleet` on the same files.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "test_util.hpp"

namespace mfu {
namespace {

namespace fs = std::filesystem;

bool dask_available() {
  return std::system("/usr/bin/python3 -c 'import distributed' >/dev/null 2>&1") == 0;
}

TEST(DaskFleet, AMapReduceOnTwoWorkersEqualsMfuFleet) {
  if (!dask_available())
    MFU_FAIL_WITHOUT_INPUT(
        "Dask not installed (tools/setup.sh --with-tests installs python3-distributed)");
  const fs::path dir = fs::temp_directory_path() / ("mfu-dask-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // 24 jobs: 6 to 13 steps of 0.4 to 0.6 s with communication timers, on 8 GPUs.
  for (int k = 0; k < 24; ++k) {
    std::string s = "{\"type\":\"meta\",\"gpus\":8,\"gpu\":\"h100-sxm\"}\n";
    for (int i = 1; i <= 6 + k % 8; ++i)
      s += fmt::format("{{\"step\":{},\"time_s\":{},\"model_flops\":1e15,\"comm_s\":0.03}}\n", i,
                       0.4 + 0.1 * (k % 3));
    test::write_file(dir / fmt::format("job{:02}.jsonl", k), s);
  }
  test::write_file(dir / "broken.log", "nothing to read\n");
  const fs::path out = dir.string() + ".dask", err = dir.string() + ".err";
  const std::string cmd =
      "timeout 300 /usr/bin/python3 " +
      test::shell_quote((test::source_dir() / "examples/fleet/dask_fleet.py").string()) +
      " --local 2 --group 3 --mfu " + test::shell_quote(MFU_BINARY_PATH) + " " +
      test::shell_quote(dir.string()) + " > " + test::shell_quote(out.string()) + " 2> " +
      test::shell_quote(err.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << test::read_file(err);
  const auto fleet =
      test::run_mfu("fleet " + test::shell_quote(dir.string()) + " --output summary");
  ASSERT_EQ(fleet.exit_code, 0) << fleet.err;
  EXPECT_EQ(test::read_file(out), fleet.out);
  EXPECT_NE(test::read_file(err).find("broken.log: not analysed"), std::string::npos)
      << test::read_file(err);
  fs::remove_all(dir);
  fs::remove(out);
  fs::remove(err);
}

}  // namespace
}  // namespace mfu
