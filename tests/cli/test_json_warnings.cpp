// Issue 18: what stderr warns about is also in the JSON report's warnings (the reader's
// warnings were missing there).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.hpp"

namespace mfu {
namespace {

TEST(JsonWarnings, ReaderWarningsReachTheJsonReport) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("mfu-warn-" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream out(path);
    out << "{\"type\":\"meta\",\"gpus\":8}\n";
    for (int i = 1; i <= 10; ++i) {
      if (i == 5)
        out << "{\"step\": 5, \"time_s\": }\n";  // a malformed record (line 6)
      else
        out << "{\"step\":" << i << ",\"time_s\":1.0,\"model_flops\":1e15}\n";
    }
  }
  const auto r =
      test::run_mfu("analyze " + test::shell_quote(path.string()) + " --peak 989.5T --output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(":6:"), std::string::npos) << r.err;  // stderr names the line
  const auto j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& w : j["warnings"])
    found |= w.get<std::string>().find(path.filename().string() + ":6:") != std::string::npos;
  EXPECT_TRUE(found) << j["warnings"].dump();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace mfu
