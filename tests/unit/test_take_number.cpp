// take_number (src/text.hpp): the number at the start of a field and what is left after it,
// for plain decimals, thousands separators and the words nan/inf (which libstdc++ 12's
// from_chars reads itself; take_number's own word path is for libraries that do not), values
// by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "text.hpp"

namespace {

struct Taken {
  std::optional<double> value;
  std::string rest;
};

Taken take(std::string_view s, bool commas = false) {
  const std::optional<double> v = mfu::detail::take_number(s, commas);
  return {v, std::string(s)};
}

}  // namespace

TEST(TakeNumber, ReadsTheNumberAndLeavesTheRest) {
  EXPECT_EQ(take("         9728 | elapsed").value, 9728.0);  // Megatron pads with spaces
  EXPECT_EQ(take("         9728 | elapsed").rest, " | elapsed");
  EXPECT_EQ(take("\t3330.2 ms").value, 3330.2);
  EXPECT_EQ(take("\t3330.2 ms").rest, " ms");
  EXPECT_EQ(take("+3.5e2x").value, 350.0);
  EXPECT_EQ(take("+3.5e2x").rest, "x");
  EXPECT_EQ(take("2.972092E+00 |").value, 2.972092);
  EXPECT_EQ(take("-0.25").value, -0.25);
  EXPECT_FALSE(take("abc").value.has_value());
  EXPECT_EQ(take("abc").rest, "abc");  // nothing taken, nothing moved
  EXPECT_FALSE(take("").value.has_value());
}

TEST(TakeNumber, ReadsThousandsSeparatorsOnlyWhenAsked) {
  EXPECT_EQ(take("10,050 tokens", true).value, 10050.0);
  EXPECT_EQ(take("10,050 tokens", true).rest, " tokens");
  EXPECT_EQ(take(" 1,234,567.5,", true).value, 1234567.5);
  EXPECT_EQ(take(" 1,234,567.5,", true).rest, ",");  // a comma not before a digit stays
  EXPECT_EQ(take("10,050 tokens").value, 10.0);      // without: the comma ends the number
  EXPECT_EQ(take("10,050 tokens").rest, ",050 tokens");
  EXPECT_FALSE(take(",5", true).value.has_value());
}

TEST(TakeNumber, ReadsNanAndInfinityWords) {
  const Taken nan = take("NaN | next");
  ASSERT_TRUE(nan.value.has_value());
  EXPECT_TRUE(std::isnan(*nan.value));
  EXPECT_EQ(nan.rest, " | next");
  EXPECT_EQ(take("-inf,").value, -HUGE_VAL);
  EXPECT_EQ(take("-inf,").rest, ",");
  EXPECT_EQ(take("Infinity ").value, HUGE_VAL);
  EXPECT_EQ(take("Infinity ").rest, " ");
  EXPECT_FALSE(take("-nope").value.has_value());
}
