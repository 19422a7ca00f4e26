// detail::printable and detail::escape_markdown against hand-written expectations.
#include <gtest/gtest.h>

#include "report/markup.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

TEST(Printable, ControlCharactersBecomeVisibleEscapes) {
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(printable("bell\x07"), "bell\\x07");
  EXPECT_EQ(printable("cr\rlf\ntab\t"), "cr\\x0dlf\\x0atab\\x09");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(printable("c1 \xc2\x9b"), "c1 \\u009b");  // U+009B, the one-byte CSI
  EXPECT_EQ(printable("H100 \xc3\xa9 \xe2\x96\x88"), "H100 \xc3\xa9 \xe2\x96\x88");  // é, █ kept
  EXPECT_FALSE(needs_printable("NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(needs_printable("x\x1b"));
}

TEST(Printable, MarkdownCannotGainStructure) {
  EXPECT_EQ(escape_markdown("a | b"), "a \\| b");
  EXPECT_EQ(escape_markdown("x\n## fake"), "x \\#\\# fake");
  EXPECT_EQ(escape_markdown("<script>"), "&lt;script&gt;");
  EXPECT_EQ(escape_markdown("a_b*c`d[e]"), "a\\_b\\*c\\`d\\[e\\]");
  EXPECT_EQ(escape_markdown("h100-sxm 989.5 TFLOP/s"), "h100-sxm 989.5 TFLOP/s");
}

}  // namespace
}  // namespace mfu::detail
