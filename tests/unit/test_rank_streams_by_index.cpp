// Several ranks' streams combined as indices into the table (combine_rank_streams' general
// case without copying the records out), against the reference path that copies every stream
// out (in_place = false). Generated jobs: ranks interleaved in one file or one file per rank,
// a lagging rank, restarts (the same for every rank or not), lines printed late, repeated
// lines, micro-batch lines (told by their timestamps or by the stated accumulation), untagged
// lines beside tagged ones, records without a step, and stated restarts at lines and records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "ingest/rank_stream_parts.hpp"
#include "ingest/rank_streams.hpp"
#include "job_records_difference.hpp"
#include "properties.hpp"

namespace mfu::detail {
namespace {

int uniform(std::mt19937& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

/// One rank's steps as it printed them: 1.. with restarts back, lines printed late, and now
/// and then a record without a step.
std::vector<std::int64_t> rank_steps(std::mt19937& rng, int n, bool restarts) {
  std::vector<std::int64_t> steps;
  std::int64_t step = 1;
  for (int k = 0; k < n; ++k) {
    steps.push_back(step++);
    if (restarts && uniform(rng, 0, 40) == 0)
      step = std::max<std::int64_t>(1, step - uniform(rng, 1, 30));
  }
  for (int swaps = uniform(rng, 0, 4); swaps > 0 && steps.size() > 2; --swaps) {
    const auto at = static_cast<std::size_t>(uniform(rng, 0, static_cast<int>(steps.size()) - 2));
    std::swap(steps[at], steps[at + 1]);
  }
  if (uniform(rng, 0, 9) == 0) steps[static_cast<std::size_t>(uniform(rng, 0, n - 1))] = -1;
  return steps;
}

struct Job {
  IterationTable table;
  std::vector<RestartMark> marks;
  RunMeta meta;
};

/// Records of `ranks` ranks (rank -1 among them: untagged lines), interleaved step by step in
/// one file or one file per rank; each record repeated now and then (identical, as
/// micro-batches whose timestamps advance, or as another logger's differing line).
Job generate(std::mt19937& rng, int most_ranks = 4) {
  Job job;
  const int ranks = uniform(rng, 1, most_ranks);
  const bool per_rank_files = uniform(rng, 0, 2) == 0;
  const bool untagged = uniform(rng, 0, 4) == 0;
  const bool same_restarts = uniform(rng, 0, 1) == 0;
  const int n = uniform(rng, 1, 120);
  std::vector<std::vector<std::int64_t>> steps;
  std::mt19937 shared(rng());
  for (int r = 0; r < ranks; ++r) {
    std::mt19937 own(rng());
    steps.push_back(rank_steps(same_restarts ? shared : own, n, true));
    if (same_restarts) shared.seed(static_cast<std::uint32_t>(job.table.size() + 7));
  }
  if (uniform(rng, 0, 3) == 0) job.meta.set("grad_accum", 2.0, "test");
  // Steps far from zero (the streams hold offsets from the lowest), and now and then one 2^40
  // on (steps more than 2^32 apart take the reference path).
  const std::int64_t origin = uniform(rng, 0, 9) == 0 ? 1'000'000'000'000 : 0;
  const bool far_step = uniform(rng, 0, 29) == 0;
  std::vector<std::uint32_t> lines(static_cast<std::size_t>(ranks), 1);
  double clock = 1.7e9;
  auto emit = [&](int r, std::int64_t step) {
    Iteration it;
    it.step = step < 0 ? step : step + origin;
    if (far_step && job.table.size() == 3) it.step += std::int64_t{1} << 40;
    it.rank = untagged && r == 0 ? -1 : r;
    it.file = per_rank_files ? static_cast<std::uint16_t>(r) : 0;
    std::uint32_t& line = lines[per_rank_files ? static_cast<std::size_t>(r) : 0];
    it.line = (line += static_cast<std::uint32_t>(uniform(rng, 1, 3)));
    it.time_s = uniform(rng, 900, 1400) / 1000.0;
    clock += it.time_s;
    it.timestamp_s = uniform(rng, 0, 5) == 0 ? kUnknown : clock;
    it.tokens = uniform(rng, 0, 9) == 0 ? kUnknown : 4096;
    it.samples = uniform(rng, 0, 1) == 0 ? kUnknown : 8;
    it.loss = uniform(rng, 1000, 9000) / 1000.0;
    it.model_flops = uniform(rng, 0, 3) == 0 ? 1e15 : kUnknown;
    it.reported_flops_per_gpu = uniform(rng, 0, 3) == 0 ? uniform(rng, 100, 300) * 1e12 : kUnknown;
    it.at(Phase::kData) = uniform(rng, 0, 50) / 1000.0;
    it.at(Phase::kComm) = uniform(rng, 0, 1) == 0 ? kUnknown : uniform(rng, 0, 90) / 1000.0;
    job.table.push_back(it);
    if (uniform(rng, 0, 60) == 0)
      job.marks.push_back({it.file, it.line - 1, uniform(rng, -1, r), std::nullopt});
    if (uniform(rng, 0, 80) == 0) job.marks.push_back({0, 0, -1, job.table.size() - 1});
    const int repeat = uniform(rng, 0, 11);
    if (repeat == 0) {  // the line printed twice
      it.line += 1;
      job.table.push_back(it);
    } else if (repeat <= 2) {  // micro-batches: one more line a micro-batch's time later
      it.line += 1;
      it.time_s = uniform(rng, 900, 1400) / 1000.0;
      if (known(it.timestamp_s)) it.timestamp_s += repeat == 1 ? it.time_s : 0.01;
      it.loss -= 0.001;
      job.table.push_back(it);
    }
    ++line;
  };
  if (per_rank_files) {
    for (int r = 0; r < ranks; ++r)
      for (std::int64_t s : steps[static_cast<std::size_t>(r)]) emit(r, s);
  } else {
    const int lag = uniform(rng, 0, 2);  // the last rank prints each step `lag` places late
    for (int k = 0; k < n + lag; ++k)
      for (int r = 0; r < ranks; ++r) {
        const int at = r == ranks - 1 ? k - lag : k;
        if (at >= 0 && at < n)
          emit(r, steps[static_cast<std::size_t>(r)][static_cast<std::size_t>(at)]);
      }
  }
  return job;
}

/// The job combined on the fast path and on the reference path (the two compared by the
/// caller).
std::pair<JobRecords, JobRecords> combined_both_ways(Job job) {
  IterationTable copy = job.table;
  JobRecords fast = combine_rank_streams(std::move(job.table), job.meta, job.marks, true);
  JobRecords ref = combine_rank_streams(std::move(copy), job.meta, job.marks, false);
  return {std::move(fast), std::move(ref)};
}

// 1,500 generated jobs: combining by index gives the reference path's records bit for bit,
// its incarnations, its counts, and every rank's summary. The cases are counted so that the
// test shows it exercised each kind of input.
TEST(RankStreamsByIndex, GivesWhatCopyingEveryStreamOutGives) {
  std::mt19937 rng(20261207);
  int several = 0, restarted = 0, micro = 0, ranks_combined = 0, disagree = 0;
  for (int c = 0; c < 1500; ++c) {
    SCOPED_TRACE(c);
    const auto [fast, ref] = combined_both_ways(generate(rng));
    EXPECT_EQ(fuzz::job_records_difference(fast, ref), "");
    if (HasFailure()) return;
    several += ref.streams.size() > 1;
    restarted += ref.incarnations.size() > 1;
    micro += ref.micro_batches > 0;
    ranks_combined += ref.rank_records > 0;
    disagree += ref.incarnations_disagree;
  }
  std::printf(
      "several ranks %d, restarted %d, micro-batches %d, ranks combined %d, "
      "disagreeing %d of 1500\n",
      several, restarted, micro, ranks_combined, disagree);
  EXPECT_GT(several, 900);  // 1135, 1384, 1414, 1471 and 971 when written
  EXPECT_GT(restarted, 1000);
  EXPECT_GT(micro, 1000);
  EXPECT_GT(ranks_combined, 1000);
  EXPECT_GT(disagree, 500);
}

// The same with up to 150 ranks: past 64, the records are read one by one instead of a block
// at a time (a block per rank would not stay read).
TEST(RankStreamsByIndex, ManyRanksGiveWhatCopyingEveryStreamOutGives) {
  std::mt19937 rng(20261208);
  int past_64 = 0;
  for (int c = 0; c < 60; ++c) {
    SCOPED_TRACE(c);
    const auto [fast, ref] = combined_both_ways(generate(rng, 150));
    EXPECT_EQ(fuzz::job_records_difference(fast, ref), "");
    if (HasFailure()) return;
    past_64 += ref.streams.size() > 64;
  }
  EXPECT_GT(past_64, 20);
}

// By hand: ranks 0 and 1 in one file, steps 1..3 each, rank 1 slower at step 2 (1.5 s
// against 1.0 s) and printing step 1 twice (identical lines); rank 0 restarts after step 3
// at step 2 (2 3 again), rank 1 does not. Job records: steps 1, 2, 3 of the first incarnation
// (1.0, 1.5, 1.0 s; step 2 timed by rank 1, placed at its first line, rank 0's line 4), then 2, 3
// of the second (rank 0's alone); one duplicate dropped; ranks disagree on the restarts; rank 1 set
// one step (the only one slower than the other); 3 records of rank 1 combined into steps.
TEST(RankStreamsByIndex, TwoRanksInOneFileByHand) {
  struct Line {
    std::int32_t rank;
    std::int64_t step;
    double time;
  };
  const Line lines[] = {{0, 1, 1.0}, {1, 1, 1.0}, {1, 1, 1.0}, {0, 2, 1.0}, {1, 2, 1.5},
                        {0, 3, 1.0}, {1, 3, 1.0}, {0, 2, 1.0}, {0, 3, 1.0}};
  IterationTable t;
  std::uint32_t line = 0;
  for (const Line& l : lines) {
    Iteration it;
    it.rank = l.rank;
    it.step = l.step;
    it.time_s = l.time;
    it.line = ++line;
    t.push_back(it);
  }
  const JobRecords out = combine_rank_streams(std::move(t), RunMeta{});
  ASSERT_EQ(out.table.size(), 5u);
  const std::int64_t steps[] = {1, 2, 3, 2, 3};
  const double times[] = {1.0, 1.5, 1.0, 1.0, 1.0};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(out.table.step(i), steps[i]) << i;
    EXPECT_EQ(out.table[i].time_s, times[i]) << i;
    EXPECT_EQ(out.table.rank(i), -1) << i;
  }
  EXPECT_EQ(out.table.line(1), 4u);  // where step 2 first appears (rank 0's line)
  EXPECT_EQ(out.incarnations, (std::vector<std::size_t>{0, 3}));
  EXPECT_EQ(out.duplicates, 1u);
  EXPECT_TRUE(out.incarnations_disagree);
  ASSERT_EQ(out.streams.size(), 2u);
  EXPECT_EQ(out.streams[0].restarts, 1u);
  EXPECT_EQ(out.streams[1].restarts, 0u);
  EXPECT_EQ(out.streams[1].slowest_steps, 1u);
  EXPECT_EQ(out.streams[0].slowest_steps, 2u);  // steps 1 and 3: equal times, rank 0 first
  EXPECT_EQ(out.rank_records, 3u);
}

// The fuzz target's property (tests/fuzz/rank_streams_property.cpp) on 1,000 random inputs of
// up to 2,000 bytes, so that every test run checks it beyond the fuzzer's corpus.
// Perturbed: the comparison the tests above and the fuzz target rely on names a change to any
// one field of one record, to the incarnations, to each count and to a rank's summary (a
// comparison that skipped one would let the two paths drift apart there unseen).
TEST(RankStreamsByIndex, TheComparisonNamesAnyOneChange) {
  std::mt19937 rng(11);
  JobRecords job;
  do job = combined_both_ways(generate(rng)).second;  // a job of several ranks and records
  while (job.streams.size() < 2 || job.table.size() < 3);
  ASSERT_EQ(fuzz::job_records_difference(job, job), "");
  const auto changed_record = [&](auto&& change) {
    JobRecords other = job;
    Iteration it = other.table[1];
    change(it);
    other.table.set(1, it);
    return fuzz::job_records_difference(job, other);
  };
  const auto bump = [](double& v) { v = std::isnan(v) ? 1.0 : v + 1.0; };
  EXPECT_EQ(changed_record([](Iteration& it) { it.step += 1; }), "record 1: step");
  EXPECT_EQ(changed_record([](Iteration& it) { it.count += 1; }), "record 1: count");
  EXPECT_EQ(changed_record([](Iteration& it) { it.line += 1; }), "record 1: line");
  EXPECT_EQ(changed_record([](Iteration& it) { it.rank += 1; }), "record 1: rank");
  EXPECT_EQ(changed_record([](Iteration& it) { it.file += 1; }), "record 1: file");
  const std::pair<const char*, double Iteration::*> values[] = {
      {"time_s", &Iteration::time_s},
      {"timestamp_s", &Iteration::timestamp_s},
      {"tokens", &Iteration::tokens},
      {"samples", &Iteration::samples},
      {"loss", &Iteration::loss},
      {"model_flops", &Iteration::model_flops},
      {"reported_flops_per_gpu", &Iteration::reported_flops_per_gpu},
      {"reported_mfu", &Iteration::reported_mfu}};
  for (const auto& [name, field] : values)
    EXPECT_EQ(changed_record([&, f = field](Iteration& it) { bump(it.*f); }),
              std::string("record 1: ") + name);
  for (std::size_t p = 0; p < kPhaseCount; ++p)
    EXPECT_EQ(changed_record([&](Iteration& it) { bump(it.phase[p]); }),
              "record 1: phase " + std::to_string(p));
  JobRecords other = job;
  other.incarnations.push_back(job.table.size());
  EXPECT_EQ(fuzz::job_records_difference(job, other), "incarnations");
  for (std::size_t JobRecords::*count : {&JobRecords::duplicates, &JobRecords::micro_batches,
                                         &JobRecords::rank_records, &JobRecords::reordered}) {
    other = job;
    other.*count += 1;
    EXPECT_EQ(fuzz::job_records_difference(job, other), "counts");
  }
  other = job;
  other.incarnations_disagree = !job.incarnations_disagree;
  EXPECT_EQ(fuzz::job_records_difference(job, other), "counts");
  other = job;
  other.streams.pop_back();
  EXPECT_EQ(fuzz::job_records_difference(job, other), "stream counts");
  const std::string summary =
      "the summary of rank " + std::to_string(job.streams[1].rank) + " differs";
  for (std::size_t RankStream::*n :
       {&RankStream::records, &RankStream::slowest_steps, &RankStream::restarts}) {
    other = job;
    other.streams[1].*n += 1;
    EXPECT_EQ(fuzz::job_records_difference(job, other), summary);
  }
  for (double RankStream::*v : {&RankStream::mean_time_s, &RankStream::mean_data_s,
                                &RankStream::first_timestamp_s, &RankStream::last_timestamp_s}) {
    other = job;
    bump(other.streams[1].*v);
    EXPECT_EQ(fuzz::job_records_difference(job, other), summary);
  }
}

TEST(RankStreamsByIndex, TheFuzzPropertyHoldsOnRandomBytes) {
  std::mt19937 rng(11);
  for (int c = 0; c < 1000; ++c) {
    std::string bytes(static_cast<std::size_t>(uniform(rng, 0, 2000)), '\0');
    for (char& b : bytes) b = static_cast<char>(uniform(rng, 0, 255));
    ASSERT_NO_THROW(fuzz::check_rank_streams(bytes)) << "input " << c;
  }
}

// RecentSteps against std::set, the structure it replaced, over 200,000 random operations in
// the pattern incarnation_starts makes: steps mostly rising, some a little behind, the bound
// rising with the highest, now and then all cleared (a restart).
TEST(RankStreamsByIndex, RecentStepsAnswersAsASetDoes) {
  std::mt19937 rng(7);
  RecentSteps fast;
  std::set<std::int64_t> ref;
  std::int64_t high = 0;
  for (int k = 0; k < 200000; ++k) {
    const int op = uniform(rng, 0, 99);
    if (op < 60) {
      high += uniform(rng, 1, 3);
      fast.insert(high);
      ref.insert(high);
    } else if (op < 80) {
      const std::int64_t s = high - uniform(rng, 0, 20);
      fast.insert(s);
      ref.insert(s);
    } else if (op < 98) {
      const std::int64_t low = high - uniform(rng, 0, 10);
      fast.forget_below(low);
      ref.erase(ref.begin(), ref.lower_bound(low));
    } else if (op == 98) {
      fast.clear();
      ref.clear();
      high = uniform(rng, 0, 50);
    }
    const std::int64_t q = high - uniform(rng, -2, 25);
    ASSERT_EQ(fast.contains(q), ref.count(q) == 1) << "operation " << k << ", step " << q;
  }
}

// logging_interval's counts of rises against the median it replaced (every rise in a vector,
// nth_element at the middle), on generated streams: one interval with restarts and gaps, a few
// intervals mixed, and rises all distinct (past the map's bound: the vector path). By hand:
// steps 10, 20, 30, 5, 15, 25, 100 rise by 10, 10, 10, 10, 75; the middle of five is 10.
TEST(RankStreamsByIndex, LoggingIntervalIsTheMedianRise) {
  const std::vector<std::int64_t> by_hand = {10, 20, 30, 5, 15, 25, 100};
  EXPECT_EQ(logging_interval(by_hand.size(), [&](std::size_t i) { return by_hand[i]; }), 10);
  // Steps at the ends of int64 (an event file's, as given): the one rise, 2^64 - 2, is more than
  // an int64 holds; the interval is the largest one that does, with no overflow on the way.
  constexpr std::int64_t kLow = std::numeric_limits<std::int64_t>::min() + 1;
  constexpr std::int64_t kHigh = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::int64_t> ends = {kLow, kHigh};
  EXPECT_EQ(logging_interval(ends.size(), [&](std::size_t i) { return ends[i]; }), kHigh);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<std::int64_t> steps;
    std::int64_t step = uniform(rng, 0, 100);
    const int n = uniform(rng, 1, trial % 10 == 0 ? 20000 : 3000);
    for (int k = 0; k < n; ++k) {
      const int kind = uniform(rng, 0, 99);
      if (trial % 3 == 2)
        step += uniform(rng, 1, 1000000);  // all distinct
      else if (kind < 2)
        step = uniform(rng, 0, 50);  // a restart
      else if (kind < 4)
        step += uniform(rng, 100, 10000);  // a gap
      else
        step += trial % 3 == 0 ? 10 : uniform(rng, 1, 4);
      steps.push_back(step);
    }
    std::vector<std::int64_t> rises;
    for (std::size_t i = 1; i < steps.size(); ++i)
      if (steps[i] > steps[i - 1]) rises.push_back(steps[i] - steps[i - 1]);
    std::int64_t want = 1;
    if (!rises.empty()) {
      std::nth_element(rises.begin(), rises.begin() + static_cast<std::ptrdiff_t>(rises.size() / 2),
                       rises.end());
      want = std::max<std::int64_t>(1, rises[rises.size() / 2]);
    }
    EXPECT_EQ(logging_interval(steps.size(), [&](std::size_t i) { return steps[i]; }), want)
        << "trial " << trial;
  }
}

}  // namespace
}  // namespace mfu::detail
