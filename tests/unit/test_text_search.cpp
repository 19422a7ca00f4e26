// Searching text: find_text (src/text.hpp), the 16-positions-a-step substring search, against
// the standard library's std::string_view::find on generated texts (every result must be the
// same), and how format detection cuts a head into lines (score_lines, ingest/text_scan.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/text_scan.hpp"
#include "io/line_prefix.hpp"
#include "text.hpp"

namespace {

/// A copy of `s` on the heap ending exactly where `s` ends, so that ASan sees any read past it.
struct ExactCopy {
  explicit ExactCopy(std::string_view s) : bytes(std::make_unique<char[]>(s.size())) {
    if (!s.empty()) std::memcpy(bytes.get(), s.data(), s.size());
    view = std::string_view(bytes.get(), s.size());
  }
  std::unique_ptr<char[]> bytes;
  std::string_view view;
};

void expect_same_as_std(std::string_view text, std::string_view needle, std::size_t from) {
  const ExactCopy t(text), n(needle);
  EXPECT_EQ(mfu::detail::find_text(t.view, n.view, from), text.find(needle, from))
      << "text '" << text << "' needle '" << needle << "' from " << from;
}

}  // namespace

// Hand-picked: a match at the start, at the very end (the last position the vector loop must
// leave to the tail), straddling a 16-byte step, after false starts whose first and last bytes
// match, none; needles of 0, 1 and 2 bytes; `from` past a match, at the end, beyond it.
TEST(FindText, AgreesWithStdFindOnHandPickedCases) {
  const std::string line =
      " [2024-01-01 00:01:03] iteration       19/100000000 | consumed samples:         9728 | "
      "elapsed time per iteration (ms): 3330.2 | throughput per GPU (TFLOP/s/GPU): 404.4 |";
  EXPECT_EQ(mfu::detail::find_text(line, "elapsed time per iteration"), line.find("elapsed"));
  EXPECT_EQ(mfu::detail::find_text(line, "iteration", 30), line.find("iteration", 30));
  EXPECT_EQ(mfu::detail::find_text(line, "(ms)"), std::size_t{114});  // counted outside mfu
  EXPECT_EQ(mfu::detail::find_text(line, "lm loss"), std::string_view::npos);
  for (std::string_view needle : {"", "|", " [", "|\n", "GPU): 404.4 |", "0000", "eXd"})
    for (std::size_t from : {0, 1, 15, 16, 17, 100, 169, 170, 171, 500})
      expect_same_as_std(line, needle, from);
  expect_same_as_std("abcabcabd", "abd", 0);
  expect_same_as_std("aXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXb", "aXb", 0);  // first/last bytes only
  expect_same_as_std(std::string(33, 'a') + "ab", "ab", 0);
  expect_same_as_std("", "", 0);
  expect_same_as_std("", "a", 0);
  expect_same_as_std("a", "ab", 0);
}

// Generated: texts of length 0..80 over a 3-letter alphabet (so that partial matches, first-
// and-last-byte matches and overlapping matches are everywhere), needles of length 0..20 taken
// from the text itself or drawn, every start position.
TEST(FindText, AgreesWithStdFindOnGeneratedTexts) {
  std::mt19937 rng(17);
  const auto draw = [&rng](std::size_t n) {
    std::string s(n, 'a');
    for (char& c : s) c = static_cast<char>('a' + rng() % 3);
    return s;
  };
  for (int round = 0; round < 3000; ++round) {
    const std::string text = draw(rng() % 81);
    const std::size_t m = rng() % 21;
    std::string needle = draw(m);
    if (round % 2 == 0 && m <= text.size()) needle = text.substr(rng() % (text.size() - m + 1), m);
    for (std::size_t from = 0; from <= text.size() + 1; ++from)
      expect_same_as_std(text, needle, from);
  }
}

// A sniffer sees every line and every '\r' segment of one (tqdm redraws a bar with '\r'), each
// trimmed; counted by hand: "a", "a", "b", "a" (CRLF's '\r' ends a line, its empty segment
// weighs nothing), "a" without a final newline.
TEST(ScoreLines, SeesEveryLineAndEveryCarriageReturnSegment) {
  const auto count_a = [](std::string_view line) { return line == "a" ? 1.0 : 0.0; };
  EXPECT_EQ(mfu::detail::score_lines("a\ra\nb\r a \r\n\na", count_a), 4.0);
  EXPECT_EQ(mfu::detail::score_lines("a\r\r\ra", count_a), 2.0);
  EXPECT_EQ(mfu::detail::score_lines("", count_a), 0.0);
  EXPECT_EQ(mfu::detail::score_lines("b\nb\n", count_a), 0.0);
}

// Detection sniffs the peeled head only when peeling changed it: a head with nothing to peel,
// cut off in the middle of its last line as a head is, comes back byte for byte; prefixes go.
TEST(PeelText, GivesBackAHeadWithNothingToPeelAsItWas) {
  const std::string plain = "{\"step\":1,\"time_s\":0.5}\n{\"step\":2,\"time_s\":0.5}\n{\"st";
  EXPECT_EQ(mfu::detail::peel_text(plain), plain);
  EXPECT_EQ(mfu::detail::peel_text(plain + "\n"), plain + "\n");
  EXPECT_EQ(mfu::detail::peel_text("[rank0]: step 1\n[rank1]: step 2"), "step 1\nstep 2");
}

namespace {

/// The rule find_rank follows, written the plain way (each key searched for in turn): the
/// reference its one-scan version must agree with.
std::int32_t find_rank_reference(std::string_view line) {
  const std::string_view head = line.substr(0, std::min<std::size_t>(line.size(), 200));
  for (std::string_view key : {"[rank", "[Rank ", "rank="}) {
    const std::size_t p = head.find(key);
    if (p == std::string_view::npos) continue;
    std::size_t i = p + key.size();
    while (i < head.size() && head[i] == ' ') ++i;
    std::int32_t r = 0;
    bool any = false;
    for (; i < head.size() && head[i] >= '0' && head[i] <= '9' && r < 10000000; ++i, any = true)
      r = r * 10 + (head[i] - '0');
    if (any) return r;
  }
  return -1;
}

}  // namespace

// Values by hand: the first key that stands with digits after it wins, in the order "[rank",
// "[Rank ", "rank="; only a key's first place counts; only the first 200 bytes are read.
TEST(FindRank, ReadsTheRankPrefixesByHand) {
  using mfu::detail::find_rank;
  EXPECT_EQ(find_rank("[rank3]: step 1"), 3);
  EXPECT_EQ(find_rank("[Rank 12] loss 2.0"), 12);
  EXPECT_EQ(find_rank("host rank=7 step"), 7);
  EXPECT_EQ(find_rank("rank=1 [Rank 2] [rank 3]"), 3);  // "[rank" first, spaces skipped
  EXPECT_EQ(find_rank("[rankX] [rank4] rank=5"), 5);    // "[rank"'s first place has no digits
  EXPECT_EQ(find_rank("frank=9"), 9);
  EXPECT_EQ(find_rank("iteration 10 | lm loss: 2.0 | no ranks here"), -1);
  EXPECT_EQ(find_rank(std::string(196, ' ') + "[rank1]"), -1);  // the key ends past byte 200
  EXPECT_EQ(find_rank(std::string(193, ' ') + "[rank1]"), 1);
}

// Generated lines built from the keys' pieces, near and across the 200-byte limit: the one-scan
// find_rank gives what the three searches give.
TEST(FindRank, AgreesWithThreeSearchesOnGeneratedLines) {
  const std::vector<std::string> pieces = {"[rank", "[Rank ", "rank=", "ank", "[R", "r", "=",
                                           " ",     "3",      "42",    "x",   "]",  "[", "frank"};
  std::mt19937 rng(7);
  for (int n = 0; n < 20000; ++n) {
    std::string line;
    const std::size_t target = rng() % 260;
    while (line.size() < target) line += pieces[rng() % pieces.size()];
    const ExactCopy copy(line);
    ASSERT_EQ(mfu::detail::find_rank(copy.view), find_rank_reference(line)) << line;
  }
}

// same_bytes against memcmp: every length from 0 to 80 (under, at and across the 16-byte
// steps), equal, or differing in one byte at each position in turn, on exact-size heap copies
// (ASan sees a read outside either range).
TEST(SameBytes, AgreesWithMemcmpAtEveryLengthAndDifferingPosition) {
  std::mt19937 rng(7);
  for (std::size_t n = 0; n <= 80; ++n) {
    std::string a(n, ' ');
    for (char& c : a) c = static_cast<char>('a' + rng() % 26);
    const ExactCopy x(a);
    const ExactCopy same(a);
    EXPECT_TRUE(mfu::detail::same_bytes(x.view.data(), same.view.data(), n)) << n;
    for (std::size_t at = 0; at < n; ++at) {
      std::string b = a;
      b[at] = static_cast<char>(b[at] ^ 0x20);
      const ExactCopy y(b);
      EXPECT_FALSE(mfu::detail::same_bytes(x.view.data(), y.view.data(), n))
          << "length " << n << ", differing at " << at;
    }
  }
}

// find_near against std::string_view::find on generated lines: bars near the start, only past
// the inline stretch (32 bytes: two 16-byte steps, then byte by byte where less than 16 are
// left), or none; as rare as 1 byte in 40 or as common as every byte; `from` at every position,
// at and past the end.
TEST(FindNear, AgreesWithStdFindOnGeneratedLines) {
  std::mt19937 rng(11);
  for (int round = 0; round < 3000; ++round) {
    const std::size_t n = rng() % 120;
    std::string s(n, 'x');
    const std::size_t first_bar = round % 3 == 0 ? 40 : 0;  // a third: none in the first 40
    const unsigned one_in = 1 + rng() % 40;
    for (std::size_t i = first_bar; i < n; ++i)
      if (rng() % one_in == 0) s[i] = '|';
    const ExactCopy t(s);
    for (std::size_t from = 0; from <= n + 5; from += from == n ? 5 : 1)
      ASSERT_EQ(mfu::detail::find_near(t.view, '|', from), s.find('|', from))
          << "'" << s << "' from " << from;
  }
}
