// Issue 18: text from a log (here an accelerator name and an event detail carrying ESC
// sequences, an OSC 8 link, BEL, CR, a C1 CSI, a table pipe, a fake heading and a <script>)
// never reaches a terminal raw, and cannot add Markdown structure or HTML to a report.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_util.hpp"

namespace mfu {
namespace {

const char* const kEvil =
    "\\u001b[2J\\u001b]8;;http://x\\u0007link\\u001b]8;;\\u0007\\r| ## fake heading\\n"
    "<script>alert(1)</script>\\u009b";

std::string evil_log() {
  const auto path = std::filesystem::temp_directory_path() /
                    ("mfu-evil-" + std::to_string(::getpid()) + ".jsonl");
  std::ofstream out(path);
  out << "{\"type\":\"meta\",\"gpus\":16,\"gpu\":\"NVIDIA " << kEvil << "\"}\n";
  for (int i = 1; i <= 20; ++i)
    out << "{\"step\":" << i << ",\"time_s\":0.33,\"model_flops\":3.5e13,\"tokens\":131072}\n";
  out << "{\"type\":\"event\",\"kind\":\"checkpoint\",\"step\":10,\"duration_s\":5,\"detail\":\""
      << kEvil << "\"}\n";
  return path.string();
}

/// Control characters a terminal acts on: C0 but newline, DEL, and the UTF-8 C1 range.
bool has_terminal_controls(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) <= 0x9f)
      return true;
  }
  return false;
}

TEST(OutputEscaping, LogTextIsNeutralisedInEveryRenderer) {
  const std::string log = evil_log();
  for (const char* format : {"text", "markdown", "json", "csv", "html"}) {
    const auto r = test::run_mfu("analyze " + test::shell_quote(log) +
                                 " --peak 19.5T --color never --output " + format);
    ASSERT_EQ(r.exit_code, 0) << format << r.err;
    EXPECT_FALSE(has_terminal_controls(r.out)) << format;
    EXPECT_FALSE(has_terminal_controls(r.err)) << format << " (stderr)";
    if (std::string(format) == "markdown" || std::string(format) == "html") {
      EXPECT_EQ(r.out.find("<script>"), std::string::npos) << format;
      EXPECT_EQ(r.out.find("\n## fake"), std::string::npos) << format;
    }
  }
  // The name is still there, visibly escaped, where the report names it.
  const auto text = test::run_mfu("analyze " + test::shell_quote(log) + " --peak 19.5T");
  EXPECT_NE(text.out.find("\\x1b[2J"), std::string::npos) << text.out;
  const auto md =
      test::run_mfu("analyze " + test::shell_quote(log) + " --peak 19.5T --output markdown");
  EXPECT_NE(md.out.find("\\| \\#\\# fake heading"), std::string::npos) << md.out;
  const auto inspect = test::run_mfu("inspect " + test::shell_quote(log));
  EXPECT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_FALSE(has_terminal_controls(inspect.out));
  EXPECT_FALSE(has_terminal_controls(inspect.err));
  const auto check = test::run_mfu("check " + test::shell_quote(log) +
                                   " --peak 19.5T --min-mfu 10% --output markdown");
  EXPECT_FALSE(has_terminal_controls(check.out));
  EXPECT_EQ(check.out.find("<script>"), std::string::npos);
  std::filesystem::remove(log);
}

}  // namespace
}  // namespace mfu
