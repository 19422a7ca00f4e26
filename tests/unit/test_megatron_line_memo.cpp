// The Megatron iteration line read with the previous line's field layout remembered
// (MegatronLineMemo, src/ingest/megatron_common.cpp) against the same line read without it
// (the reference path: every field searched for and matched by name), on generated sequences of
// lines whose layout changes at random: keys renamed, reordered, dropped, padded differently,
// fields without a key or without ": ", values that do not parse.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ingest/megatron_common.hpp"

namespace {

using mfu::detail::MegatronIterationLine;
using mfu::detail::MegatronLineMemo;
using mfu::detail::parse_megatron_iteration;

/// Bits of a double, so that NaN compares equal to the same NaN and 0.0 differs from -0.0.
std::uint64_t bits(double v) {
  return std::bit_cast<std::uint64_t>(v);
}

/// Everything the parser fills, as text: two results are the same when these are.
std::string describe(bool parsed, const MegatronIterationLine& l, std::string_view line) {
  std::string s = parsed ? "parsed" : "rejected";
  for (const double v :
       {l.timestamp_s, l.time_s, l.reported_flops_per_gpu, l.consumed_samples, l.consumed_tokens,
        l.global_batch, l.loss, l.samples_per_s, l.tokens_per_gpu_per_s, l.actual_seq_len})
    s.append(" ").append(std::to_string(bits(v)));
  s.append(" it=").append(std::to_string(l.iteration));
  s.append("/").append(std::to_string(l.train_iters));
  s.append(" skipped=").append(std::to_string(l.skipped));
  s.append(" reporter=").append(l.reporter != nullptr ? l.reporter : "none");
  s.append(" bad=").append(l.bad_number ? "yes" : "no");
  s.append(" '").append(l.bad_field).append("'");
  // The bad field must be a view into the line itself, where its key is.
  if (!l.bad_field.empty())
    s.append(" at ").append(std::to_string(l.bad_field.data() - line.data()));
  return s;
}

/// Fields a line may hold: the keys every reader of the line knows, near misses of them
/// (a different case, padding, "loss scale", which is not the loss), a field without a key,
/// one without ": ", and one with two.
const std::vector<std::string> kKeys = {
    "elapsed time per iteration (ms)",
    "elapsed time per iteration (s)",
    "throughput per GPU (TFLOP/s/GPU)",
    "tokens per gpu per second (tgs)",
    "TFLOPs",
    "TFLOPS",
    "approx flops per GPU",
    "actual seqlen",
    "consumed samples",
    "consumed tokens",
    "global batch size",
    "samples per second",
    "samples/sec",
    "number of skipped iterations",
    "lm loss",
    "mlm loss",
    "loss",
    "loss scale",
    "learning rate",
    "grad norm",
    "Consumed samples",
    "consumed  samples",
    "",
    "a: b",
};

const std::vector<std::string> kValues = {"3343.0", "  512", "2.480588E+00", "400.9", "112.9TFLOPS",
                                          "nan",    "-inf",  "x12",          "",      " 1e400",
                                          "0",      "7"};

struct Field {
  std::string key;  // "\x01" for a field without ": "
  std::string pad;  // blanks around the key
};

std::string render(const std::vector<Field>& layout, std::mt19937& rng, int iteration) {
  std::string line = " [2024-01-01 00:00:0";
  line.append(std::to_string(iteration % 10)).append("] iteration ");
  line.append(std::to_string(iteration)).append("/ 1000 |");
  for (const Field& f : layout) {
    const std::string& value = kValues[rng() % kValues.size()];
    if (f.key == "\x01")
      line.append(" no colon here ").append(value).append(" |");
    else
      line.append(f.pad).append(f.key).append(": ").append(value).append(" |");
  }
  return line;
}

Field random_field(std::mt19937& rng) {
  if (rng() % 10 == 0) return {"\x01", ""};
  return {kKeys[rng() % kKeys.size()], rng() % 4 == 0 ? "  " : " "};
}

/// A layout the next line keeps most of the time, or changes in one way.
void mutate(std::vector<Field>& layout, std::mt19937& rng) {
  switch (rng() % 5) {
    case 0: layout[rng() % layout.size()] = random_field(rng); break;
    case 1: std::swap(layout[rng() % layout.size()], layout[rng() % layout.size()]); break;
    case 2:
      if (layout.size() > 2)
        layout.erase(layout.begin() + static_cast<long>(rng() % layout.size()));
      break;
    case 3:
      layout.insert(layout.begin() + static_cast<long>(rng() % layout.size()), random_field(rng));
      break;
    default: layout[rng() % layout.size()].pad = rng() % 2 == 0 ? " " : "   "; break;
  }
}

}  // namespace

TEST(MegatronLineMemo, ReadsEveryLineAsTheReferencePathDoes) {
  std::mt19937 rng(20261204);
  std::size_t lines = 0, hits = 0;
  for (int sequence = 0; sequence < 200; ++sequence) {
    std::vector<Field> layout = {{"elapsed time per iteration (ms)", " "}};
    for (int k = 0; k < 6; ++k) layout.push_back(random_field(rng));
    MegatronLineMemo memo;
    for (int i = 1; i <= 40; ++i) {
      if (rng() % 4 == 0) mutate(layout, rng);
      const std::string line = render(layout, rng, i);
      MegatronIterationLine reference, remembered;
      const bool a = parse_megatron_iteration(line, reference);
      const bool b = parse_megatron_iteration(line, remembered, &memo);
      ASSERT_EQ(describe(a, reference, line), describe(b, remembered, line))
          << "sequence " << sequence << " line " << i << ": " << line;
      lines += 1;
      hits += a ? 1 : 0;
    }
  }
  // Most lines are iteration lines (the elapsed time is the first field until a change drops it):
  // the comparison above is mostly over parsed lines, not over two rejections.
  EXPECT_GT(hits, lines * 3 / 4);
}

// Values by hand: a key that changes in place (the loss becomes the loss scale, the elapsed
// time changes unit) takes its new meaning on the line where it changes.
TEST(MegatronLineMemo, AFieldRenamedInPlaceTakesItsNewMeaning) {
  MegatronLineMemo memo;
  MegatronIterationLine first, second, third;
  ASSERT_TRUE(parse_megatron_iteration(
      " iteration 1/ 10 | elapsed time per iteration (ms): 2000.0 | lm loss: 2.5 |", first, &memo));
  EXPECT_EQ(first.time_s, 2.0);  // 2000 ms
  EXPECT_EQ(first.loss, 2.5);
  ASSERT_TRUE(parse_megatron_iteration(
      " iteration 2/ 10 | elapsed time per iteration (ms): 1500.0 | lm loss: 2.25 |", second,
      &memo));
  EXPECT_EQ(second.time_s, 1.5);
  EXPECT_EQ(second.loss, 2.25);
  ASSERT_TRUE(parse_megatron_iteration(
      " iteration 3/ 10 | elapsed time per iteration (s): 1.25 | loss scale: 4096.0 |", third,
      &memo));
  EXPECT_EQ(third.time_s, 1.25);        // seconds now, not 1.25 ms
  EXPECT_TRUE(std::isnan(third.loss));  // the loss scale is not the loss
  EXPECT_EQ(third.iteration, 3);
}

// A line of many fields is read whole, but only its first fields are remembered: the memo does
// not grow with the line.
TEST(MegatronLineMemo, ALineOfManyFieldsIsReadButNotAllRemembered) {
  std::string line = " iteration 7/ 10 | elapsed time per iteration (ms): 500.0 |";
  for (int i = 0; i < 200; ++i) line.append(" f: 1 |");
  line.append(" lm loss: 1.5 |");  // past the remembered fields: found by search
  MegatronLineMemo memo;
  for (int pass = 0; pass < 2; ++pass) {
    MegatronIterationLine l;
    ASSERT_TRUE(parse_megatron_iteration(line, l, &memo));
    EXPECT_EQ(l.time_s, 0.5);
    EXPECT_EQ(l.loss, 1.5);
  }
  EXPECT_EQ(memo.fields.size(), MegatronLineMemo::kMaxFields);
}
