// Replays every input under tests/fuzz/regressions/TARGET/ (inputs that once crashed a fuzz
// target or broke one of its properties) and the fuzz seeds under tests/fuzz/seeds, through the
// same property checks the fuzz targets run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "mfu/ingest.hpp"
#include "properties.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

namespace fs = std::filesystem;

void replay(const fs::path& root) {
  if (!fs::is_directory(root)) return;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    const std::string target = dir.path().filename().string();
    for (const auto& f : fs::directory_iterator(dir.path())) {
      if (!f.is_regular_file()) continue;
      SCOPED_TRACE(f.path().string());
      const std::string data = test::read_file(f.path());
      EXPECT_NO_THROW(fuzz::run_target(target, data));
    }
  }
}

TEST(FuzzRegressions, EveryRecordedInputPassesItsProperties) {
  // The recorded inputs pass every property, the copy's analysis included (on unless the
  // environment sets MFU_FUZZ_COPY_ANALYSIS=0: see check_copy_analysis).
  ::setenv("MFU_FUZZ_COPY_ANALYSIS", "1", 1);
  replay(fs::path(MFU_SOURCE_DIR) / "tests/fuzz/regressions");
  replay(fs::path(MFU_SOURCE_DIR) / "tests/fuzz/seeds");
}

// Every format mfu reads has a fuzz target of its own (a new parser without one fails here).
TEST(FuzzRegressions, EveryFormatHasATarget) {
  for (const auto& f : known_formats()) {
    bool found = false;
    for (const auto& t : fuzz::targets()) found = found || t.format == f.name;
    EXPECT_TRUE(found) << "no fuzz target reads format " << f.name;
  }
  EXPECT_THROW(fuzz::run_target("no_such_target", ""), std::invalid_argument);
}

}  // namespace
}  // namespace mfu
