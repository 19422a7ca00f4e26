// The record store against a second code path: a plain std::vector<Iteration> that receives the
// same writes. The store keeps a column that follows a rule (steps +1, lines +2, a constant
// token count) as the rule and its exceptions, and turns it into plain storage when they grow;
// whichever representation a column is in, every record must read back as written.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "mfu/error.hpp"
#include "mfu/run.hpp"

namespace mfu {
namespace {

bool same(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

/// The store keeps loss and the printed MFU as float.
Iteration as_stored(Iteration it) {
  it.loss = static_cast<float>(it.loss);
  it.reported_mfu = static_cast<float>(it.reported_mfu);
  return it;
}

/// Every field of a and b compared as expect_same_record compares it: by value, NaN equal to
/// any NaN (the store reads a missing value back as its own NaN), unlike the bit-for-bit
/// comparison of two combinings in tests/fuzz/job_records_difference.hpp.
bool same_record(const Iteration& a, const Iteration& b) {
  bool equal = a.step == b.step && a.count == b.count && a.line == b.line && a.rank == b.rank &&
               a.file == b.file && same(a.time_s, b.time_s) && same(a.timestamp_s, b.timestamp_s) &&
               same(a.tokens, b.tokens) && same(a.samples, b.samples) && same(a.loss, b.loss) &&
               same(a.model_flops, b.model_flops) && same(a.reported_mfu, b.reported_mfu) &&
               same(a.reported_flops_per_gpu, b.reported_flops_per_gpu);
  for (std::size_t p = 0; p < kPhaseCount; ++p) equal = equal && same(a.phase[p], b.phase[p]);
  return equal;
}

void expect_same_record(const Iteration& a, const Iteration& b, int trial, std::size_t i) {
  // The asserts below name the field that differs; run on millions of equal records they took
  // most of a sanitizer test run (100 s for the test below), so equal records stop here.
  if (same_record(a, b)) return;
  ASSERT_EQ(a.step, b.step) << trial << " record " << i;
  ASSERT_EQ(a.count, b.count) << trial << " record " << i;
  ASSERT_EQ(a.line, b.line) << trial << " record " << i;
  ASSERT_EQ(a.rank, b.rank) << trial << " record " << i;
  ASSERT_EQ(a.file, b.file) << trial << " record " << i;
  for (auto [x, y] : {std::pair{a.time_s, b.time_s},
                      {a.timestamp_s, b.timestamp_s},
                      {a.tokens, b.tokens},
                      {a.samples, b.samples},
                      {a.loss, b.loss},
                      {a.model_flops, b.model_flops},
                      {a.reported_mfu, b.reported_mfu},
                      {a.reported_flops_per_gpu, b.reported_flops_per_gpu}})
    ASSERT_TRUE(same(x, y)) << trial << " record " << i << ": " << x << " vs " << y;
  for (std::size_t p = 0; p < kPhaseCount; ++p)
    ASSERT_TRUE(same(a.phase[p], b.phase[p])) << trial << " record " << i << " phase " << p;
}

/// A default record holding only `fields` of `full`: what a read of those fields gives.
Iteration only(const Iteration& full, RecordFields fields) {
  const auto in = [fields](RecordFields f) { return any_of(fields, f); };
  Iteration it;
  if (in(RecordFields::kStep)) it.step = full.step;
  if (in(RecordFields::kCount)) it.count = full.count;
  if (in(RecordFields::kLine)) it.line = full.line;
  if (in(RecordFields::kRank)) it.rank = full.rank;
  if (in(RecordFields::kFile)) it.file = full.file;
  if (in(RecordFields::kTimestamp)) it.timestamp_s = full.timestamp_s;
  if (in(RecordFields::kTime)) it.time_s = full.time_s;
  if (in(RecordFields::kTokens)) it.tokens = full.tokens;
  if (in(RecordFields::kSamples)) it.samples = full.samples;
  if (in(RecordFields::kLoss)) it.loss = full.loss;
  if (in(RecordFields::kModelFlops)) it.model_flops = full.model_flops;
  if (in(RecordFields::kReportedFlops)) it.reported_flops_per_gpu = full.reported_flops_per_gpu;
  if (in(RecordFields::kReportedMfu)) it.reported_mfu = full.reported_mfu;
  if (in(RecordFields::kPhases)) it.phase = full.phase;
  return it;
}

/// Every field alone, and sets of them that passes read.
const RecordFields kFieldSets[] = {RecordFields::kStep,
                                   RecordFields::kCount,
                                   RecordFields::kLine,
                                   RecordFields::kRank,
                                   RecordFields::kFile,
                                   RecordFields::kTimestamp,
                                   RecordFields::kTime,
                                   RecordFields::kTokens,
                                   RecordFields::kSamples,
                                   RecordFields::kLoss,
                                   RecordFields::kModelFlops,
                                   RecordFields::kReportedFlops,
                                   RecordFields::kReportedMfu,
                                   RecordFields::kPhases,
                                   RecordFields::kWork,
                                   RecordFields::kStep | RecordFields::kCount |
                                       RecordFields::kLine | RecordFields::kTime |
                                       RecordFields::kTimestamp};

/// Whether `it` holds a value of `fields` other than a default record's.
bool holds(const Iteration& it, RecordFields fields) {
  const Iteration none;
  Iteration a = only(it, fields), b = only(none, fields);
  for (Iteration* r : {&a, &b}) {  // NaN == NaN here
    for (double* v : {&r->timestamp_s, &r->time_s, &r->tokens, &r->samples, &r->loss,
                      &r->model_flops, &r->reported_flops_per_gpu, &r->reported_mfu})
      if (std::isnan(*v)) *v = -12345;
    for (double& v : r->phase)
      if (std::isnan(v)) v = -12345;
  }
  return a.step != b.step || a.count != b.count || a.line != b.line || a.rank != b.rank ||
         a.file != b.file || a.timestamp_s != b.timestamp_s || a.time_s != b.time_s ||
         a.tokens != b.tokens || a.samples != b.samples || a.loss != b.loss ||
         a.model_flops != b.model_flops || a.reported_flops_per_gpu != b.reported_flops_per_gpu ||
         a.reported_mfu != b.reported_mfu || a.phase != b.phase;
}

/// Every record read one at a time, in blocks of uneven sizes (IterationTable::read, which
/// passes over many records use), and one column at a time equals the reference; so do the
/// reads of some fields alone (the others left as they were: unknown). A field some record
/// holds is one the table may hold.
void expect_same(const IterationTable& t, const std::vector<Iteration>& ref, int trial) {
  ASSERT_EQ(t.size(), ref.size()) << trial;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(t.step(i), ref[i].step) << trial << " record " << i;
    expect_same_record(t[i], ref[i], trial, i);
  }
  std::vector<Iteration> block(ref.size());
  std::vector<double> comm(ref.size());
  for (std::size_t first = 0, len = 1; first < ref.size(); first += len, len = len * 3 + 1) {
    len = std::min(len, ref.size() - first);
    t.read(first, len, block.data() + first);
    t.read(Phase::kComm, first, len, comm.data() + first);
  }
  for (std::size_t i = 0; i < ref.size(); ++i) {
    expect_same_record(block[i], ref[i], trial, i);
    ASSERT_TRUE(same(comm[i], ref[i].at(Phase::kComm))) << trial << " record " << i;
  }
  // Timers held as decimals read back through their digits as they do as doubles.
  std::vector<std::int32_t> digits(ref.size());
  for (std::size_t p = 0; p < kPhaseCount; ++p) {
    const auto phase = static_cast<Phase>(p);
    const std::optional<int> scale = t.decimal_scale(phase);
    if (!scale) continue;
    t.read_digits(phase, *scale, 0, ref.size(), digits.data());
    for (std::size_t i = 0; i < ref.size(); ++i)
      ASSERT_TRUE(same(IterationTable::timer_of_digits(digits[i], *scale), ref[i].phase[p]))
          << trial << " record " << i << " phase " << p;
  }
  // A value the store calls uniform is what every record reads back.
  for (const auto& [field, value_of] :
       {std::pair{RecordFields::kTokens, +[](const Iteration& it) { return it.tokens; }},
        {RecordFields::kSamples, +[](const Iteration& it) { return it.samples; }},
        {RecordFields::kModelFlops, +[](const Iteration& it) { return it.model_flops; }}}) {
    const std::optional<double> u = t.uniform(field);
    if (!u) continue;
    for (std::size_t i = 0; i < ref.size(); ++i)
      ASSERT_TRUE(same(*u, value_of(ref[i])))
          << trial << " record " << i << " field " << static_cast<int>(field);
  }
  std::vector<Iteration>& part = block;
  for (const RecordFields fields : kFieldSets) {
    std::fill(part.begin(), part.end(), Iteration{});
    for (std::size_t first = 0, len = 1; first < ref.size(); first += len, len = len * 2 + 1) {
      len = std::min(len, ref.size() - first);
      t.read(first, len, part.data() + first, fields);
    }
    bool held = false;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      expect_same_record(part[i], only(ref[i], fields), trial, i);
      held = held || holds(ref[i], fields);
    }
    if (held) {
      ASSERT_TRUE(t.may_hold(fields)) << trial << " fields " << static_cast<int>(fields);
    }
  }
}

/// Record k of a run whose columns follow rules broken at random, with probability `noise`.
Iteration record(std::size_t k, double noise, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  auto broken = [&] { return u(rng) < noise; };
  Iteration it;
  it.step =
      static_cast<std::int64_t>(k) + 100 + (broken() ? static_cast<std::int64_t>(rng() % 50) : 0);
  it.line = static_cast<std::uint32_t>(2 * k + 3 + (broken() ? 1 : 0));
  it.count = broken() ? 1 + static_cast<std::uint32_t>(rng() % 9) : 1;
  it.rank = broken() ? static_cast<std::int32_t>(rng() % 16) : (k % 2 == 0 ? 0 : -1);
  it.file = broken() ? static_cast<std::uint16_t>(rng() % 3) : 0;
  it.tokens = broken() ? kUnknown : 524288;
  it.samples = k < 10 ? kUnknown : 64;  // a column that starts late
  it.time_s = 0.5 + u(rng);             // no rule: plain storage at once
  it.loss = broken() ? kUnknown : 2.5;
  it.model_flops = 1.5e15;
  // TFLOP/s with one decimal times 10^12, as parsers give them (a column with a unit), unless
  // broken (no such decimal: the column turns into doubles).
  it.reported_flops_per_gpu =
      broken() ? 1e15 / 3 : static_cast<double>(100 + rng() % 9900) / 10 * 1e12;
  it.at(Phase::kComm) = broken() ? 0.1 * u(rng) : 0.05;
  if (k % 7 == 0) it.at(Phase::kData) = 0.01;
  // Columns of decimals as logs print them: 3 decimals, then 6 (the column moves to the finer
  // scale), a value that is no decimal when broken (it turns into doubles), a missing one, -0.
  const double r = u(rng);
  it.at(Phase::kForward) = k < 500       ? std::round(r * 1e3) / 1e3
                           : broken()    ? r
                           : k % 11 == 0 ? kUnknown
                           : k % 13 == 0 ? -0.0
                                         : std::round(r * 1e6) / 1e6;
  // Whole seconds, unless broken (milliseconds); large values near the int32 limit.
  it.timestamp_s = 1714521600.0 + static_cast<double>(k) + (broken() ? 0.25 : 0.0);
  it.at(Phase::kBackward) = std::round(r * 2e5) / 100.0;  // up to 2000.00 s at 2 decimals
  return it;
}

TEST(IterationTable, ReadsBackWhatWasWrittenWhateverTheColumnsRepresentation) {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 60; ++trial) {
    // From columns that keep their rule (noise 0) to ones that must turn into plain storage.
    const double noise = trial % 6 == 0 ? 0.0 : (trial % 6) * 0.08;
    // Trial 5 crosses the plain chunks' boundaries of every column type (2 MiB chunks: 262,144
    // doubles, 1,048,576 file indices).
    const std::size_t n = trial == 5 ? 1100000 : 1 + rng() % (trial % 3 == 0 ? 100000 : 3000);
    IterationTable t;
    // Expecting some number of records, more or fewer than come (a hint only).
    if (trial % 4 == 2) t.reserve(rng() % 200000);
    std::vector<Iteration> ref;
    for (std::size_t k = 0; k < n; ++k) {
      const Iteration it = record(k, noise, rng);
      t.push_back(it);
      ref.push_back(as_stored(it));
    }
    // Rewrites anywhere (a parser replaces a record it has already added), some back to the
    // rule; in some trials backwards over the last 200 records (out-of-order exceptions).
    for (int w = 0; w < (trial % 4 == 1 ? 200 : 50) && !ref.empty(); ++w) {
      const std::size_t i = trial % 4 == 1
                                ? ref.size() - 1 - std::min<std::size_t>(w, ref.size() - 1)
                                : rng() % ref.size();
      Iteration it = record(i, w % 2 == 0 ? 0.0 : 1.0, rng);
      if (w % 5 == 4) {  // the count and the time alone (as finalize sets them)
        t.set_count(i, it.count);
        t.set_time(i, it.time_s);
        ref[i].count = it.count;
        ref[i].time_s = it.time_s;
        continue;
      }
      t.set(i, it);
      ref[i] = as_stored(it);
    }
    for (std::size_t d = rng() % 5; d > 0 && !ref.empty(); --d) {
      t.pop_back();
      ref.pop_back();
    }
    // A piece done with (chunked parsing gives back its columns' mostly empty last chunks),
    // then grown again: by 300,000 records in trial 5, past the shrunk chunk of every column
    // type and into a new chunk of the 8-byte ones.
    if (trial % 2 == 1) {
      t.shrink_to_fit();
      for (std::size_t k = 0, more = trial == 5 ? 300000 : rng() % 300; k < more; ++k) {
        const Iteration it = record(ref.size(), noise, rng);
        t.push_back(it);
        ref.push_back(as_stored(it));
      }
    }
    // A second piece appended, and a copy.
    IterationTable piece;
    if (trial % 4 == 3) piece.reserve(n / 3);
    for (std::size_t k = 0; k < n / 3; ++k) {
      const Iteration it = record(ref.size() + k, noise, rng);
      piece.push_back(it);
      ref.push_back(as_stored(it));
    }
    if (trial % 3 == 0) piece.shrink_to_fit();
    t.append(std::move(piece));
    // The table is now two segments: rewrites land in either, and pops may empty the second.
    for (int w = 0; w < 20 && !ref.empty(); ++w) {
      const std::size_t i = rng() % ref.size();
      const Iteration it = record(i, 1.0, rng);
      t.set(i, it);
      ref[i] = as_stored(it);
    }
    for (std::size_t d = trial % 5 == 2 ? n / 3 + 1 : rng() % 3; d > 0 && !ref.empty(); --d) {
      t.pop_back();
      ref.pop_back();
    }
    const Iteration more = record(ref.size(), noise, rng);
    t.push_back(more);
    ref.push_back(as_stored(more));
    const IterationTable copy = t;
    expect_same(t, ref, trial);
    expect_same(copy, ref, trial);
  }
}

// same_record, which lets equal records skip the asserts, sees a change to any one field.
TEST(IterationTable, SameRecordSeesAChangeToAnyField) {
  std::mt19937_64 rng(5);
  const Iteration base = as_stored(record(7, 0.2, rng));
  EXPECT_TRUE(same_record(base, base));
  std::vector<Iteration> changed(8 + 5 + kPhaseCount, base);
  double* doubles[] = {&changed[0].time_s,       &changed[1].timestamp_s,
                       &changed[2].tokens,       &changed[3].samples,
                       &changed[4].loss,         &changed[5].model_flops,
                       &changed[6].reported_mfu, &changed[7].reported_flops_per_gpu};
  for (double* d : doubles) *d = std::isnan(*d) ? 1.0 : *d + 1.0;
  changed[8].step += 1;
  changed[9].count += 1;
  changed[10].line += 1;
  changed[11].rank += 1;
  changed[12].file += 1;
  for (std::size_t p = 0; p < kPhaseCount; ++p) {
    double& v = changed[13 + p].phase[p];
    v = std::isnan(v) ? 1.0 : v + 1.0;
  }
  for (std::size_t k = 0; k < changed.size(); ++k)
    EXPECT_FALSE(same_record(base, changed[k])) << "field " << k;
}

// Perturbed: the comparison fires on one differing field (the check above can fail).
TEST(IterationTable, TheComparisonSeesOneChangedValue) {
  std::mt19937_64 rng(3);
  IterationTable t;
  std::vector<Iteration> ref;
  for (std::size_t k = 0; k < 1000; ++k) {
    const Iteration it = record(k, 0.0, rng);
    t.push_back(it);
    ref.push_back(as_stored(it));
  }
  Iteration changed = ref[500];
  changed.step += 1;  // breaks the +1 rule at one record
  t.set(500, changed);
  EXPECT_EQ(t[500].step, ref[500].step + 1);
  EXPECT_EQ(t[499].step, ref[499].step);
  EXPECT_EQ(t[501].step, ref[501].step);
  // Only the columns without a rule take storage, in a first chunk of 1024 slots: time (no
  // decimal: 8 B), rank (0 and -1 alternating, 4 B), data wait (every 7th record, 0.01: a
  // decimal, 2 B offsets), forward (decimals until the -0 at record 507 turns it into doubles,
  // 8 B): 22,528 bytes. Backward (2 decimals up to 200000 in digits, farther apart than 16-bit
  // offsets reach) has its 1024 offsets (2 B) and its one block as int32s, 1,000 of them in a
  // vector grown by doubling: at most 2 x 4,000 bytes. Two blocks (16 B each). The rule
  // columns (step, line, tokens, samples, loss, FLOPs, comm, whole-second timestamps: 56 B a
  // record as plain columns) cost their one exception, the changed step (16 B).
  EXPECT_LE(t.memory_bytes(), 1024u * (8 + 4 + 2 + 8 + 2) + 8000u + 32u + 16u);
}

/// The steps and times of `t` against the reference's, read a block of uneven size at a time
/// (the store's other fields are checked by expect_same, which is much slower on 600,000 records).
void expect_same_steps_and_times(const IterationTable& t, const std::vector<Iteration>& ref) {
  ASSERT_EQ(t.size(), ref.size());
  std::vector<Iteration> got(ref.size());
  for (std::size_t first = 0, len = 1000; first < ref.size(); first += len, len += 7919) {
    len = std::min(len, ref.size() - first);
    t.read(first, len, got.data() + first, RecordFields::kStep | RecordFields::kTime);
  }
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(got[i].step, ref[i].step) << i;
    ASSERT_EQ(got[i].time_s, ref[i].time_s) << i;
  }
}

// A table done growing keeps only what it holds: 300,000 times that are no decimal (a column of
// doubles, 2 MiB chunks of 262,144) take two whole chunks, 4,194,304 bytes, and then
// (262,144 + 37,856) x 8 = 2,400,000 bytes; the other columns follow rules (no storage). Records
// read back the same before and after, and after growing again past the shrunk chunk.
TEST(IterationTable, ShrinkingKeepsTheRecordsAndGivesBackTheUnusedChunkTail) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  IterationTable t;
  std::vector<Iteration> ref;
  const auto add = [&](std::size_t count) {
    for (std::size_t k = 0; k < count; ++k) {
      Iteration it;
      it.step = static_cast<std::int64_t>(ref.size());
      it.time_s = u(rng);
      t.push_back(it);
      ref.push_back(it);
    }
  };
  add(300000);
  EXPECT_EQ(t.memory_bytes(), 4194304u);
  t.shrink_to_fit();
  EXPECT_EQ(t.memory_bytes(), 2400000u);
  expect_same_steps_and_times(t, ref);
  const IterationTable copy = t;
  expect_same_steps_and_times(copy, ref);
  add(300000);  // 600,000 records: three chunks again, the second one grown back whole
  EXPECT_EQ(t.memory_bytes(), 3u * 4194304u / 2u);
  expect_same_steps_and_times(t, ref);
}

// 600 times that are no decimal (a column of doubles; the other columns follow rules): a table
// expecting 1,000 records holds them in the 1,000 slots it started with (8,000 bytes), one that
// expects nothing in 256 slots doubled twice (1,024 slots: 8,192 bytes). Both read back alike.
TEST(IterationTable, AReservedTableStartsWithRoomForWhatItExpects) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  IterationTable expecting, plain;
  expecting.reserve(1000);
  std::vector<Iteration> ref;
  for (std::size_t k = 0; k < 600; ++k) {
    Iteration it;
    it.step = static_cast<std::int64_t>(k);
    it.time_s = u(rng);
    expecting.push_back(it);
    plain.push_back(it);
    ref.push_back(it);
  }
  EXPECT_EQ(expecting.memory_bytes(), 8000u);
  EXPECT_EQ(plain.memory_bytes(), 8192u);
  expect_same(expecting, ref, 0);
  expect_same(plain, ref, 1);
}

// Lines of a piece moved by the lines before it: every line but the unknown ones (0), whether
// the column is a rule (+2 a record), a rule with exceptions, a rule through zero (a stride
// that crosses 0 cannot keep its form) or plain storage; against the reference's lines moved.
TEST(IterationTable, ShiftedLinesAreTheLinesPlusTheShiftZerosKept) {
  std::mt19937_64 rng(41);
  for (int trial = 0; trial < 12; ++trial) {
    IterationTable t;
    std::vector<Iteration> ref;
    const std::size_t n = 1 + rng() % 5000;
    for (std::size_t k = 0; k < n; ++k) {
      Iteration it = record(k, trial % 3 == 0 ? 0.0 : 0.2, rng);
      if (trial % 4 == 1 && rng() % 10 == 0) it.line = 0;           // records without a line
      if (trial % 4 == 2) it.line = static_cast<std::uint32_t>(k);  // a rule starting at 0
      t.push_back(it);
      ref.push_back(as_stored(it));
    }
    IterationTable piece;  // a second segment, shifted too
    for (std::size_t k = 0; k < n / 2; ++k) {
      const Iteration it = record(k, 0.0, rng);
      piece.push_back(it);
      ref.push_back(as_stored(it));
    }
    t.append(std::move(piece));
    const auto shift = static_cast<std::uint32_t>(1 + rng() % 100000);
    t.shift_lines(shift);
    for (Iteration& it : ref)
      if (it.line != 0) it.line += shift;
    expect_same(t, ref, trial);
  }
}

// set_source is what moving an input's records into a run of several does: by hand, every
// record's file becomes the input's index, the records without a rank (-1) take the input's
// rank, and those with one keep it; every other field stays as written. With rank -1 the
// ranks are left alone; with file 0 the file column goes back to all zeros.
TEST(IterationTable, SetSourceGivesEveryRecordItsFileAndTheUntaggedItsRank) {
  std::mt19937_64 rng(43);
  for (int trial = 0; trial < 12; ++trial) {
    IterationTable t;
    std::vector<Iteration> ref;
    const std::size_t n = 1 + rng() % 5000;
    for (int piece = 0; piece < 2; ++piece) {
      IterationTable part;
      for (std::size_t k = 0; k < n; ++k) {
        Iteration it = record(k, 0.2, rng);
        it.rank = trial % 3 == 0 || rng() % 4 == 0 ? -1 : static_cast<std::int32_t>(rng() % 8);
        it.file = static_cast<std::uint16_t>(trial % 2 == 0 ? 0 : 1 + rng() % 3);
        part.push_back(it);
        ref.push_back(as_stored(it));
      }
      t.append(std::move(part));
    }
    const auto file = static_cast<std::uint16_t>(trial % 4 == 3 ? 0 : 2 + trial);
    const std::int32_t rank = trial % 5 == 4 ? -1 : 100 + trial;
    t.set_source(file, rank);
    for (Iteration& it : ref) {
      it.file = file;
      if (it.rank < 0) it.rank = rank;
    }
    expect_same(t, ref, trial);
  }
}

// may_hold is what lets a pass skip a field: false only while no record was given a value.
TEST(IterationTable, AFieldNoRecordWasGivenIsNotHeld) {
  IterationTable t;
  EXPECT_FALSE(t.may_hold(RecordFields::kAll));
  for (std::int64_t k = 1; k <= 1000; ++k) {
    Iteration it;
    it.step = k;
    it.time_s = 1.25;
    it.tokens = kUnknown;  // unknown values given are not values
    it.count = 1;
    t.push_back(it);
  }
  EXPECT_TRUE(t.may_hold(RecordFields::kStep));
  EXPECT_TRUE(t.may_hold(RecordFields::kTime));
  EXPECT_TRUE(t.may_hold(RecordFields::kTime | RecordFields::kModelFlops));
  for (const RecordFields f :
       {RecordFields::kTokens, RecordFields::kCount, RecordFields::kModelFlops,
        RecordFields::kPhases, RecordFields::kRank, RecordFields::kWork})
    EXPECT_FALSE(t.may_hold(f)) << static_cast<int>(f);
  Iteration later = t[700];
  later.at(Phase::kData) = 0.5;
  t.set(700, later);
  EXPECT_TRUE(t.may_hold(RecordFields::kPhases));
  t.set_count(3, 4);
  EXPECT_TRUE(t.may_hold(RecordFields::kCount));
  EXPECT_EQ(t.count(3), 4u);
  EXPECT_TRUE(t.may_hold(RecordFields::kWork));  // the count is one of them
  EXPECT_FALSE(t.may_hold(RecordFields::kTokens));
}

// A pass that starts its records from Iteration{} reads only the columns some record holds
// (read_held); the rest read as Iteration{} in every record. Checked against read() of every
// column, on tables of several pieces where each piece gives its own random subset of the
// fields (a phase timer that only the second piece has, a rank only the first), read in blocks
// that cross the pieces' boundaries, and against a plain vector of what was written; and a
// pass over the records that takes them as const, which reads them so.
TEST(IterationTable, ReadingOnlyTheHeldColumnsReadsWhatReadingAllReads) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    IterationTable table;
    std::vector<Iteration> written;
    const int pieces = 1 + static_cast<int>(rng() % 4);
    for (int p = 0; p < pieces; ++p) {
      IterationTable piece;
      const std::uint32_t gives = rng();  // bit f: this piece's records give field f
      const std::size_t n = 1 + rng() % 1500;
      for (std::size_t k = 0; k < n; ++k) {
        Iteration it;
        const auto gives_field = [&](int f) { return ((gives >> f) & 1u) != 0 && rng() % 8 != 0; };
        it.step = static_cast<std::int64_t>(written.size());
        if (gives_field(0)) it.count = 1 + rng() % 3;
        if (gives_field(1)) it.rank = static_cast<std::int32_t>(rng() % 4);
        if (gives_field(2)) it.time_s = 0.5 + static_cast<double>(rng() % 1000) / 1000;
        if (gives_field(3)) it.tokens = 4096;
        if (gives_field(4)) it.samples = static_cast<double>(rng() % 64);
        if (gives_field(5)) it.loss = 2.5;
        if (gives_field(6)) it.model_flops = 1e15 + static_cast<double>(rng() % 7) * 1e12;
        if (gives_field(7)) it.reported_mfu = 0.4;
        if (gives_field(8)) it.timestamp_s = 1.7e9 + static_cast<double>(k);
        for (std::size_t ph = 0; ph < kPhaseCount; ++ph)
          if (gives_field(9 + static_cast<int>(ph)))
            it.phase[ph] = static_cast<double>(rng() % 90) / 100;
        piece.push_back(it);
        written.push_back(as_stored(it));
      }
      table.append(std::move(piece));
    }
    const IterationTable::HeldColumns held = table.held_columns();
    std::vector<Iteration> all(table.size()), some(table.size());
    table.read(0, table.size(), all.data());
    for (std::size_t first = 0; first < table.size(); first += 333) {
      const std::size_t n = std::min<std::size_t>(333, table.size() - first);
      table.read_held(first, n, some.data() + first, RecordFields::kAll, held);
    }
    // A pass that takes its records as const reads them so too (for_each_record).
    std::vector<Iteration> passed;
    for_each_record(table, [&](std::size_t, const Iteration& it) { passed.push_back(it); });
    ASSERT_EQ(passed.size(), table.size());
    for (std::size_t i = 0; i < table.size(); ++i) {
      expect_same_record(some[i], all[i], trial, i);
      expect_same_record(some[i], written[i], trial, i);
      expect_same_record(passed[i], written[i], trial, i);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// The store knows a column holds one value without reading it when the column is one
// constant rule (or was never written) in every piece; a value written once differently, one
// missing before the rule starts, or a piece with another value, and it does not say.
TEST(IterationTable, AColumnOfOneValueIsKnownAsSuch) {
  const auto table = [](std::size_t n, auto&& tokens_of) {
    IterationTable t;
    for (std::size_t k = 0; k < n; ++k) {
      Iteration it;
      it.step = static_cast<std::int64_t>(k) + 1;
      it.tokens = tokens_of(k);
      t.push_back(it);
    }
    return t;
  };
  const auto constant = [](std::size_t) { return 4096.0; };
  EXPECT_EQ(table(100, constant).uniform(RecordFields::kTokens), 4096.0);
  EXPECT_EQ(IterationTable{}.uniform(RecordFields::kTokens), std::nullopt);  // no record
  const std::optional<double> none = table(100, constant).uniform(RecordFields::kSamples);
  ASSERT_TRUE(none.has_value());  // never written: unknown in every record
  EXPECT_TRUE(std::isnan(*none));
  EXPECT_EQ(table(100, [](std::size_t k) { return k == 50 ? 2048.0 : 4096.0; })
                .uniform(RecordFields::kTokens),
            std::nullopt);
  EXPECT_EQ(table(100, [](std::size_t k) { return k < 3 ? kUnknown : 4096.0; })
                .uniform(RecordFields::kTokens),
            std::nullopt);
  EXPECT_EQ(table(100, [](std::size_t k) { return k < 90 ? 4096.0 : kUnknown; })
                .uniform(RecordFields::kTokens),
            std::nullopt);
  IterationTable pieces = table(100, constant);
  pieces.append(table(50, constant));
  EXPECT_EQ(pieces.uniform(RecordFields::kTokens), 4096.0);
  pieces.append(table(50, [](std::size_t) { return 8192.0; }));
  EXPECT_EQ(pieces.uniform(RecordFields::kTokens), std::nullopt);
  IterationTable set_later = table(100, constant);
  Iteration changed = set_later[10];
  changed.tokens = 1.0;
  set_later.set(10, changed);
  EXPECT_EQ(set_later.uniform(RecordFields::kTokens), std::nullopt);
  changed.tokens = 4096.0;  // written back: one value again
  set_later.set(10, changed);
  EXPECT_EQ(set_later.uniform(RecordFields::kTokens), 4096.0);
}

// Timers printed with a few decimals are held as digits at one scale, which the fast median
// selects on; a piece at another scale, or a timer that is no short decimal, turns that off.
TEST(IterationTable, DecimalTimersHaveOneScaleAcrossPieces) {
  const auto table = [](std::vector<double> timers) {
    IterationTable t;
    for (std::size_t k = 0; k < timers.size(); ++k) {
      Iteration it;
      it.step = static_cast<std::int64_t>(k) + 1;
      it.at(Phase::kComm) = timers[k];
      t.push_back(it);
    }
    return t;
  };
  IterationTable t = table({0.25, 0.125, kUnknown, 0.5});  // 3 decimals: 250, 125, -, 500
  ASSERT_EQ(t.decimal_scale(Phase::kComm), 3);
  EXPECT_EQ(t.decimal_scale(Phase::kData), -1);  // no timer at all: any scale
  std::vector<std::int32_t> d(4);
  t.read_digits(Phase::kComm, 3, 0, 4, d.data());
  EXPECT_EQ(d,
            (std::vector<std::int32_t>{250, 125, std::numeric_limits<std::int32_t>::min(), 500}));
  EXPECT_EQ(IterationTable::timer_of_digits(125, 3), 0.125);
  IterationTable same_scale = table({0.375});
  t.append(std::move(same_scale));
  EXPECT_EQ(t.decimal_scale(Phase::kComm), 3);
  IterationTable other_scale = table({0.5});  // 1 decimal
  t.append(std::move(other_scale));
  EXPECT_EQ(t.decimal_scale(Phase::kComm), std::nullopt);
  EXPECT_THROW(t.read_digits(Phase::kComm, 3, 0, t.size(), std::vector<std::int32_t>(6).data()),
               InternalError);
  IterationTable doubles = table({0.1 + 0.2});  // 0.30000000000000004: no short decimal
  EXPECT_EQ(doubles.decimal_scale(Phase::kComm), std::nullopt);
}

}  // namespace
}  // namespace mfu
