// Issue 18: "mfu help", "mfu help COMMAND", "did you mean" for mistyped subcommands and flags,
// the usage line naming mfu (not the binary's path), and --version with the commit.
#include <gtest/gtest.h>

#include "test_util.hpp"

namespace mfu {
namespace {

TEST(Help, HelpCommandsAndSuggestions) {
  const auto all = test::run_mfu("help");
  EXPECT_EQ(all.exit_code, 0);
  EXPECT_NE(all.out.find("analyze"), std::string::npos) << all.out;
  EXPECT_EQ(all.out.find(MFU_BINARY_PATH), std::string::npos) << all.out;  // "Usage: mfu ..."
  const auto one = test::run_mfu("help analyze");
  EXPECT_EQ(one.exit_code, 0);
  EXPECT_NE(one.out.find("--per-iteration"), std::string::npos) << one.out;

  const auto typo = test::run_mfu("analyse examples/classic_330ms.jsonl");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("did you mean 'mfu analyze'?"), std::string::npos) << typo.err;
  const auto flag = test::run_mfu("analyze examples/classic_330ms.jsonl --gpuss 8");
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_NE(flag.err.find("did you mean --gpus?"), std::string::npos) << flag.err;
  const auto far = test::run_mfu("analyze examples/classic_330ms.jsonl --completely-unknown 1");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;  // no wild guess

  // mfu models NAME, like mfu gpus NAME. Llama 3 8B at 8,192 under palm: 6 x 7.50B matmul
  // parameters + 12 x 32 x 4096 x 8192 = 57.91 GFLOP per token (also tests/unit/test_flops.cpp).
  const auto model = test::run_mfu("models llama3-8b");
  EXPECT_EQ(model.exit_code, 0) << model.err;
  EXPECT_NE(model.out.find("57.91 GFLOP"), std::string::npos) << model.out;
  EXPECT_NE(model.out.find("maxtext-full-attention"), std::string::npos) << model.out;
  EXPECT_EQ(test::run_mfu("models no-such-model").exit_code, 2);

  const auto v = test::run_mfu("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("(commit "), std::string::npos) << v.out;
}

}  // namespace
}  // namespace mfu
