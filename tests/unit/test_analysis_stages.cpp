// The stages of mfu::analyze one at a time (src/analysis/stages.hpp), on values worked out by
// hand in each test.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "analysis/stages.hpp"
#include "mfu/error.hpp"
#include "mfu/gpu.hpp"

namespace mfu::detail {
namespace {

/// A run of records (step, time, timestamp), one per line from line 2.
Run make_run(const std::vector<std::tuple<std::int64_t, double, double>>& rows,
             std::uint32_t count = 1) {
  Run run;
  run.inputs = {"run.log"};
  std::uint32_t line = 2;
  for (const auto& [step, time, ts] : rows) {
    Iteration it;
    it.step = step;
    it.time_s = time;
    it.timestamp_s = ts;
    it.count = count;
    it.line = line++;
    run.iterations.push_back(it);
    if (std::isfinite(ts)) {
      run.first_timestamp_s =
          std::isnan(run.first_timestamp_s) ? ts : std::min(run.first_timestamp_s, ts);
      run.last_timestamp_s =
          std::isnan(run.last_timestamp_s) ? ts : std::max(run.last_timestamp_s, ts);
    }
  }
  return run;
}

double sum_of(const Clock& c, const Records& rec) {
  double s = c.tail;
  for (std::size_t i = 0; i < rec.time.size(); ++i)
    if (!std::isnan(c.layout.span(rec, i))) s += c.layout.span(rec, i) + c.layout.gap(rec, i);
  return s;
}

// ---- records ----------------------------------------------------------------------------

TEST(Stages, ValidationMakesSentinelsUnknownAndNamesThem) {
  Iteration it;
  it.time_s = -1;
  it.tokens = 0;
  it.model_flops = -5;
  it.samples = 8;
  it.at(Phase::kData) = -1;
  it.at(Phase::kComm) = 0;  // a timer that measured nothing is a measurement
  it.at(Phase::kIdle) = std::numeric_limits<double>::infinity();
  std::vector<const char*> bad;
  const Iteration v = validated(it, &bad);
  EXPECT_TRUE(std::isnan(v.time_s));
  EXPECT_TRUE(std::isnan(v.tokens));
  EXPECT_TRUE(std::isnan(v.model_flops));
  EXPECT_EQ(v.samples, 8);
  EXPECT_TRUE(std::isnan(v.at(Phase::kData)));
  EXPECT_EQ(v.at(Phase::kComm), 0);
  EXPECT_TRUE(std::isnan(v.at(Phase::kIdle)));
  EXPECT_EQ(bad.size(), 5u);
}

// valid_record() is the fast test every pass makes before validate() changes anything: for
// each field and each kind of value it must agree with the rule (by hand below) and with what
// drop_invalid_fields() does, the reference path.
TEST(Stages, FastValidityTestAgreesWithTheRuleForEveryFieldAndValue) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  struct Case {
    double v;
    bool keeps_positive, keeps_timer;  // by hand: unknown, or finite and > 0 (>= 0 a timer)
  };
  const std::vector<Case> cases = {
      {NAN, true, true},   {1.0, true, true},    {1e-310, true, true}, {1.7e308, true, true},
      {0.0, false, true},  {-0.0, false, true},  {-1.0, false, false}, {-1e-310, false, false},
      {inf, false, false}, {-inf, false, false},
  };
  std::vector<double* (*)(Iteration&)> positive = {
      [](Iteration& i) { return &i.time_s; },
      [](Iteration& i) { return &i.tokens; },
      [](Iteration& i) { return &i.samples; },
      [](Iteration& i) { return &i.model_flops; },
      [](Iteration& i) { return &i.reported_flops_per_gpu; },
      [](Iteration& i) { return &i.reported_mfu; },
  };
  auto check = [](const Iteration& it, bool expected, const std::string& what) {
    EXPECT_EQ(valid_record(it), expected) << what;
    Iteration dropped = it;
    std::vector<const char*> names;
    drop_invalid_fields(dropped, &names);
    EXPECT_EQ(names.empty() && dropped.count == it.count, expected) << what;
  };
  Iteration valid;  // every field known and valid
  valid.time_s = 1.5, valid.tokens = 4096, valid.samples = 2, valid.model_flops = 1e15;
  valid.reported_flops_per_gpu = 4e14, valid.reported_mfu = 0.4;
  for (double& t : valid.phase) t = 0.25;
  check(valid, true, "all valid");
  for (const Case& c : cases) {
    for (std::size_t f = 0; f < positive.size(); ++f) {
      Iteration it = valid;
      *positive[f](it) = c.v;
      check(it, c.keeps_positive, fmt::format("field {} = {}", f, c.v));
    }
    for (std::size_t p = 0; p < kPhaseCount; ++p) {
      Iteration it = valid;
      it.phase[p] = c.v;
      check(it, c.keeps_timer, fmt::format("timer {} = {}", p, c.v));
    }
  }
  Iteration no_count = valid;
  no_count.count = 0;  // read as 1
  check(no_count, false, "count 0");
}

TEST(Stages, RecordsMarkSegmentStartsWhereTheStepGoesBack) {
  const mfu::Run run = make_run({{1, 1, NAN}, {2, 1, NAN}, {3, -1, NAN}, {2, 1, NAN}, {3, 1, NAN}});
  const Records rec = read_records(run);
  EXPECT_EQ(rec.timed, 4u);
  EXPECT_TRUE(rec.flags[0] & kRecordSegmentStart);
  EXPECT_TRUE(rec.flags[2] & kRecordUntimed);
  EXPECT_TRUE(rec.flags[3] & kRecordSegmentStart);
  EXPECT_FALSE(rec.flags[4] & kRecordSegmentStart);
  ASSERT_EQ(rec.warnings.size(), 1u);
  EXPECT_NE(rec.warnings[0].find("run.log:4: step 3: time"), std::string::npos);
}

// ---- warm-up ----------------------------------------------------------------------------

TEST(Stages, WarmupEndsWhereTheSeriesSettles) {
  // Level 1 s, tolerance 0.1 s: 5, 4, 3 are warm-up; 1.05 is within the tolerance.
  EXPECT_EQ(settle_index({5, 4, 3, 1.05, 1, 1, 1, 1, 1, 1}, 1.0, 0.1), 3u);
  // No warm-up at all.
  EXPECT_EQ(settle_index({1, 1, 1, 1}, 1.0, 0.1), 0u);
  // One fast record among slow ones does not end the warm-up: the next few are still slow.
  EXPECT_EQ(settle_index({5, 1, 5, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1.0, 0.1), 5u);
  // Untimed records are skipped; the warm-up counts timed records.
  EXPECT_EQ(settle_index({3, NAN, 3, 1, 1, 1, 1, 1}, 1.0, 0.1), 2u);
  // Never more than half of the segment: a run that changes pace is not all warm-up.
  EXPECT_EQ(settle_index({3, 3, 3, 3, 3, 3, 1, 1}, 1.0, 0.1), 4u);
  // 100 warm-up records of a 400-record run: no cap at 20.
  std::vector<double> long_warmup(100, 2.5);
  long_warmup.resize(400, 1.0);
  EXPECT_EQ(settle_index(long_warmup, 1.0, 0.1), 100u);
}

// ---- clock ------------------------------------------------------------------------------

// The steady median of a timer is over the steady records alone, whichever way the timer is
// held: as decimal digits (0.1, 0.2 printed with one decimal: the radix selection on digits)
// or as doubles (the same values times 1 + 1e-10, no decimal of 9 places: the selection on
// doubles). 42 records of 1 s: steps 1-5 warm-up (--warmup 5) with a timer of 0.9; 17 steady
// records at 0.1 and 17 at 0.2; one steady record with a -1 'not measured' timer; two stalls
// of 5 s (above median 1 s + 1%) with 4.0. The 34 valid steady timers have their median
// between ranks 16 and 17 (0-based): (0.1 + 0.2) / 2 = 0.15. With the warm-up and stall
// records it would be 0.2 (41 values, rank 20), with the -1 counted 0.1 (35 values, rank 17).
TEST(Stages, TimerMediansAreOverTheSteadyRecordsAlone) {
  for (const double scale : {1.0, 1.0 + 1e-10}) {
    std::vector<std::tuple<std::int64_t, double, double>> rows;
    std::vector<double> comm;
    for (std::int64_t step = 1; step <= 42; ++step) {
      double time = 1.0, c = 0;
      if (step <= 5) {
        c = 0.9;
      } else if (step == 20 || step == 30) {
        time = 5.0;
        c = 4.0;
      } else if (step == 25) {
        c = -1;
      } else {
        c = step % 2 == 0 ? 0.1 : 0.2;
      }
      rows.emplace_back(step, time, kUnknown);
      comm.push_back(c == -1 ? c : c * scale);
    }
    mfu::Run run = make_run(rows);
    for (std::size_t i = 0; i < comm.size(); ++i) {
      Iteration it = run.iterations[i];
      it.at(Phase::kComm) = comm[i];
      run.iterations.set(i, it);
    }
    ASSERT_EQ(run.iterations.decimal_scale(Phase::kComm).has_value(), scale == 1.0);
    AnalyzeOptions o;
    o.warmup = 5;
    const Resolved r = resolve_inputs(run, o, GpuDatabase::builtin());
    Analysis a;
    Records rec = read_records(run);
    const WorkPlan work = plan_work(run, r, rec, a);
    const Steady st = find_steady(run, r, work, o, rec, a);
    ASSERT_EQ(st.median, 1.0);
    EXPECT_NEAR(st.timer_median[static_cast<std::size_t>(Phase::kComm)], 0.15 * scale, 1e-15)
        << "scale " << scale;
  }
}

// The FLOP source is the log's own count when any record prints one, however late: the pass
// that looks stops early only once nothing more can be found. 200,000 records with tokens
// from the first; FLOPs (or the framework's FLOP/s) only in the last 10, on 1 and 2 threads.
TEST(Stages, TheFlopSourceSeesCountsPrintedLate) {
  for (const bool reported : {false, true}) {
    mfu::Run run;
    run.inputs = {"run.log"};
    constexpr std::size_t kRecords = 200000;
    for (std::size_t i = 0; i < kRecords; ++i) {
      Iteration it;
      it.step = static_cast<std::int64_t>(i) + 1;
      it.line = static_cast<std::uint32_t>(i) + 1;
      it.time_s = 1.0;
      it.tokens = 4096;
      if (i + 10 >= kRecords) {
        if (reported)
          it.reported_flops_per_gpu = 4e14;
        else
          it.model_flops = 1e15;
      }
      run.iterations.push_back(it);
    }
    AnalyzeOptions o;
    o.gpu = "h100";
    o.gpus = 8;
    for (unsigned threads : {1u, 2u}) {
      const Resolved r = resolve_inputs(run, o, GpuDatabase::builtin());
      Analysis a;
      const Records rec = read_records(run, threads);
      const WorkPlan work = plan_work(run, r, rec, a);
      EXPECT_EQ(work.source, reported ? WorkSource::kFramework : WorkSource::kLog)
          << "threads " << threads;
    }
  }
}

// The per-iteration MFU is weighted by the iterations each record covers. 40 records of 1 s an
// iteration on one GPU of peak 1e15 FLOP/s, alternating 1 iteration at MFU 0.4 (4e14 FLOPs)
// and 3 iterations at MFU 0.2: mean (0.4 x 20 + 0.2 x 60) / 80 = 0.25 (0.3 unweighted), median
// 0.2 (60 of the 80 iterations). With every record covering 1, mean 0.3.
TEST(Stages, PerIterationMfuIsWeightedByIterations) {
  for (const bool mixed : {true, false}) {
    mfu::Run run;
    run.inputs = {"run.log"};
    std::int64_t step = 0;
    for (int k = 0; k < 40; ++k) {
      Iteration it;
      it.count = mixed && k % 2 == 1 ? 3 : 1;
      step += it.count;
      it.step = step;
      it.line = static_cast<std::uint32_t>(k) + 1;
      it.time_s = 1.0;
      it.model_flops = k % 2 == 0 ? 4e14 : 2e14;
      run.iterations.push_back(it);
    }
    AnalyzeOptions o;
    o.peak_flops = 1e15;
    o.gpus = 1;
    o.warmup = 0;
    o.threads = 1;
    const Analysis a = analyze(run, o);
    EXPECT_EQ(a.mfu_per_iteration.count, 40u);
    EXPECT_NEAR(a.mfu_per_iteration.mean, mixed ? 0.25 : 0.3, 1e-7) << mixed;
    if (mixed) {
      EXPECT_NEAR(a.mfu_per_iteration.median, 0.2, 1e-7);
    }
  }
}

TEST(Stages, ClockLaysRecordsAndGapsEndToEnd) {
  // Steps of 1 s stamped at their end: 100, 101, 104 (a 2 s gap), 105; the log's last line at
  // 107 (a 2 s tail). Start = 99 (the first step began 1 s before its stamp): wall 8 s.
  mfu::Run run = make_run({{1, 1, 100}, {2, 1, 101}, {3, 1, 104}, {4, 1, 105}});
  run.last_timestamp_s = 107;
  const Records rec = read_records(run);
  const Clock c = plan_clock(run, rec);
  ASSERT_TRUE(c.use);
  EXPECT_DOUBLE_EQ(c.end - c.start, 8.0);
  EXPECT_DOUBLE_EQ(c.layout.gap(rec, 0), 0.0);
  EXPECT_DOUBLE_EQ(c.layout.gap(rec, 2), 2.0);
  EXPECT_DOUBLE_EQ(c.layout.span(rec, 2), 1.0);
  EXPECT_DOUBLE_EQ(c.tail, 2.0);
  EXPECT_DOUBLE_EQ(sum_of(c, rec), 8.0);
}

TEST(Stages, ClockSecondResolutionMakesNoSpuriousGapsAndStillAddsUp) {
  // 0.4 s steps stamped to the whole second: the stamps step by 0 or 1 s, never a real gap.
  std::vector<std::tuple<std::int64_t, double, double>> rows;
  for (int i = 1; i <= 50; ++i) rows.emplace_back(i, 0.4, std::floor(1000 + 0.4 * i));
  const mfu::Run run = make_run(rows);
  const Records rec = read_records(run);
  const Clock c = plan_clock(run, rec);
  ASSERT_TRUE(c.use);
  double gaps = 0;
  for (std::size_t i = 1; i < rec.time.size(); ++i) gaps += c.layout.gap(rec, i);
  EXPECT_LT(gaps, 1.0 + 1e-9);
  EXPECT_NEAR(sum_of(c, rec), c.end - c.start, 1e-9);
}

TEST(Stages, ClockCorrectsDaylightSavingAndYearRollover) {
  // +1 h between the 2nd and 3rd step (clocks go forward): corrected, wall 4 s.
  const mfu::Run fwd =
      make_run({{1, 1, 1000}, {2, 1, 1001}, {3, 1, 1002 + 3600}, {4, 1, 1003 + 3600}});
  const Clock a = plan_clock(fwd, read_records(fwd));
  ASSERT_TRUE(a.use);
  EXPECT_DOUBLE_EQ(a.end - a.start, 4.0);
  ASSERT_FALSE(a.warnings.empty());
  EXPECT_NE(a.warnings[0].find("run.log:4"), std::string::npos);
  // -1 h (clocks go back).
  const mfu::Run back =
      make_run({{1, 1, 5000}, {2, 1, 5001}, {3, 1, 5002 - 3600}, {4, 1, 5003 - 3600}});
  EXPECT_DOUBLE_EQ(
      plan_clock(back, read_records(back)).end - plan_clock(back, read_records(back)).start, 4.0);
  // A year-less stamp read as 1970: 31 Dec 23:59:59 then 1 Jan 00:00:00 reads 365 days back.
  const double dec31 = 364 * 86400.0 + 86399;
  const mfu::Run year = make_run({{1, 1, dec31 - 1}, {2, 1, dec31}, {3, 1, 0}, {4, 1, 1}});
  const Clock y = plan_clock(year, read_records(year));
  ASSERT_TRUE(y.use);
  EXPECT_DOUBLE_EQ(y.end - y.start, 4.0);
}

// The clock reads the timed records' timestamps a part of the records per thread. Runs of
// 3 x 2^16 + 777 records of 1 s stamped at their ends (1001, 1002, ...; every third record
// next to a cut of 2 or 3 threads untimed) lay out the same on 1, 2, 3 and 8 threads, with
// the wall time worked out by hand: the first step starts at 1000, the last ends at 1000 + n,
// so n seconds whatever records are untimed. One stamp that is not a whole second, or one
// timed record without a stamp, in the first or the last part decides for the whole run.
TEST(Stages, ClockReadOnSeveralThreadsIsTheClockReadOnOne) {
  constexpr std::size_t kBlock = std::size_t{1} << 16, n = 3 * kBlock + 777;
  enum class Odd { kNone, kFraction, kMissing };
  for (const Odd odd : {Odd::kNone, Odd::kFraction, Odd::kMissing})
    for (const std::size_t at : {std::size_t{5}, n - 5}) {
      std::vector<std::tuple<std::int64_t, double, double>> rows;
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t d = i % kBlock;
        const bool untimed = i >= kBlock && (d < 3 || d > kBlock - 3) && i % 3 == 0;
        double stamp = 1001.0 + static_cast<double>(i);
        if (i == at && odd == Odd::kFraction) stamp += 0.5;
        if (i == at && odd == Odd::kMissing) stamp = NAN;
        rows.emplace_back(static_cast<std::int64_t>(i + 1), untimed ? NAN : 1.0, stamp);
      }
      const mfu::Run run = make_run(rows);
      const Records one = read_records(run, 1);
      const Clock reference = plan_clock(run, one);
      ASSERT_EQ(reference.use, odd != Odd::kMissing);
      if (reference.use) {
        EXPECT_EQ(reference.resolution, odd == Odd::kNone ? 1.0 : 0.0);
        EXPECT_DOUBLE_EQ(reference.end - reference.start, static_cast<double>(n));
      }
      for (const unsigned threads : {2u, 3u, 8u}) {
        const Records rec = read_records(run, threads);
        const Clock c = plan_clock(run, rec);
        const std::string where =
            fmt::format("odd {} at {}, {} threads", static_cast<int>(odd), at, threads);
        ASSERT_EQ(c.use, reference.use) << where;
        if (!c.use) continue;
        EXPECT_EQ(c.resolution, reference.resolution) << where;
        EXPECT_EQ(c.start, reference.start) << where;
        EXPECT_EQ(c.end, reference.end) << where;
        EXPECT_EQ(c.tail, reference.tail) << where;
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(std::isnan(c.layout.span(rec, i)), std::isnan(reference.layout.span(one, i)));
          if (std::isnan(c.layout.span(rec, i))) continue;
          ASSERT_EQ(c.layout.span(rec, i), reference.layout.span(one, i)) << where << " " << i;
          ASSERT_EQ(c.layout.gap(rec, i), reference.layout.gap(one, i)) << where << " " << i;
        }
      }
    }
}

TEST(Stages, ClockSlowerThanTheStepsIsSetAside) {
  // 1 s steps whose stamps advance 0.9 s: 10% slower than the steps say.
  std::vector<std::tuple<std::int64_t, double, double>> rows;
  for (int i = 1; i <= 20; ++i) rows.emplace_back(i, 1.0, 1000 + 0.9 * i);
  const mfu::Run run = make_run(rows);
  const Clock c = plan_clock(run, read_records(run));
  EXPECT_FALSE(c.use);
  EXPECT_EQ(c.source, "the record durations");
  ASSERT_FALSE(c.warnings.empty());
  // Within 3% the clock stands (its small squeezes come out of the records it covers).
  rows.clear();
  for (int i = 1; i <= 20; ++i) rows.emplace_back(i, 1.0, 1000 + 0.98 * i);
  const mfu::Run close = make_run(rows);
  const Records close_rec = read_records(close);
  const Clock k = plan_clock(close, close_rec);
  EXPECT_TRUE(k.use);
  EXPECT_NEAR(sum_of(k, close_rec), k.end - k.start, 1e-9);
}

// The clock's layout keeps only what differs from the records' own durations: against two
// plain arrays given the same writes, in order and out of it, back to the default and not.
TEST(Stages, ClockLayoutReadsBackWhatWasSet) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 20; ++trial) {
    Records rec;
    const std::size_t n = 1 + rng() % 300;
    rec.time.resize(n);
    rec.counts.resize(n);
    rec.flags.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      rec.time[i] = u(rng) < 0.1 ? kUnknown : 0.5 + u(rng);
      rec.counts[i] = 1 + static_cast<std::uint32_t>(rng() % 3);
      rec.flags[i] = 0;
    }
    std::vector<double> span(n), gap(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) span[i] = rec.time[i] * rec.count(i);
    ClockLayout layout;
    for (int w = 0; w < 400; ++w) {
      // Forward writes first (as the layout is made), then anywhere (the deficit taken back).
      const std::size_t i = w < 200 ? static_cast<std::size_t>(w) * n / 200 : rng() % n;
      if (std::isnan(rec.time[i])) continue;
      const double v = u(rng) < 0.3 ? rec.time[i] * rec.count(i) : (u(rng) < 0.5 ? 0.0 : u(rng));
      if (rng() % 2 == 0) {
        layout.set_span(rec, i, v);
        span[i] = v;
      } else {
        layout.set_gap(rec, i, v);
        gap[i] = v;
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isnan(rec.time[i])) {
        EXPECT_TRUE(std::isnan(layout.span(rec, i)) && std::isnan(layout.gap(rec, i)));
        continue;
      }
      ASSERT_EQ(layout.span(rec, i), span[i]) << trial << " record " << i;
      ASSERT_EQ(layout.gap(rec, i), gap[i]) << trial << " record " << i;
    }
  }
}

TEST(Stages, ClockSpansAlwaysTelescopeOnRandomClocks) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  int used = 0;
  for (int run_no = 0; run_no < 200; ++run_no) {
    std::vector<std::tuple<std::int64_t, double, double>> rows;
    double clock = 1.7e9 + u(rng) * 1e6;
    const bool whole = u(rng) < 0.5;
    int step = 0;
    for (int i = 1; i <= 60; ++i) {
      const double t = 0.2 + u(rng) * (u(rng) < 0.02 ? 1e6 : 1.0);  // now and then absurd
      clock += t * (0.985 + 0.03 * u(rng)) + (u(rng) < 0.1 ? 3 * u(rng) : 0.0);
      // Restarts (the step goes back), some with the clock a little back or an hour back.
      step = u(rng) < 0.05 ? std::max(1, step - 3) : step + 1;
      const double jitter = u(rng) < 0.05 ? -30 * u(rng) : (u(rng) < 0.02 ? -3600.0 : 0.0);
      rows.emplace_back(step, t, (whole ? std::floor(clock) : clock) + jitter);
    }
    const mfu::Run run = make_run(rows);
    const Records rec = read_records(run);
    const Clock c = plan_clock(run, rec);
    if (!c.use) continue;
    ++used;
    EXPECT_GE(c.end - c.start, 0) << run_no;
    EXPECT_NEAR(sum_of(c, rec), c.end - c.start, 1e-9 * (c.end - c.start)) << run_no;
    for (std::size_t i = 0; i < rec.time.size(); ++i) {
      if (std::isnan(rec.time[i])) continue;
      EXPECT_GE(c.layout.span(rec, i), 0);
      EXPECT_GE(c.layout.gap(rec, i), 0);
    }
  }
  EXPECT_GT(used, 40);  // the clock stands in enough of them to test something
}

// ---- one record -------------------------------------------------------------------------

// add_unless_zero against a plain sum, bit for bit, on sums of values drawn from signed zeros,
// NaN, infinities, values that cancel exactly and random magnitudes: leaving the zeros out of a
// sum from +0 must never change it (the walk and decompose() rely on it for identical results).
TEST(Stages, SumsLeavingOutZerosAreTheSameBits) {
  std::mt19937_64 rng(11);
  const double pool[] = {0.0,
                         -0.0,
                         0.0,
                         -0.0,
                         1.5,
                         -1.5,
                         0.1,
                         -0.1,
                         1e-300,
                         -1e-300,
                         std::numeric_limits<double>::infinity(),
                         kUnknown};
  for (int trial = 0; trial < 100000; ++trial) {
    double plain = 0, skipping = 0;
    const int terms = 1 + static_cast<int>(rng() % 30);
    for (int k = 0; k < terms; ++k) {
      const double v = rng() % 3 == 0 ? std::ldexp(static_cast<double>(rng() % 1000) - 500.0,
                                                   static_cast<int>(rng() % 40) - 20)
                                      : pool[rng() % (std::size(pool) - (trial % 7 ? 2 : 0))];
      plain += v;
      add_unless_zero(skipping, v);
      ASSERT_EQ(std::bit_cast<std::uint64_t>(plain), std::bit_cast<std::uint64_t>(skipping))
          << "trial " << trial << " term " << k;
    }
  }
}

TEST(Stages, DecomposeTimersFirstComputeKeepsItsRoom) {
  // 1 s record: ideal 0.5 s; comm timer 0.3, data 0.4 (0.7 of timers, but only 0.5 s is left
  // beside the compute at peak): comm 0.3, data 0.2, 0.2 s over (warned); residual 0.
  RecordInput in;
  in.span = 1.0;
  in.timers.fill(kUnknown);
  in.timers[static_cast<std::size_t>(Phase::kComm)] = 0.3;
  in.timers[static_cast<std::size_t>(Phase::kData)] = 0.4;
  in.ideal = 0.5;
  const RecordSplit s = decompose(in);
  EXPECT_DOUBLE_EQ(s.part[static_cast<std::size_t>(Part::kCompute)], 0.5);
  EXPECT_DOUBLE_EQ(s.part[static_cast<std::size_t>(Part::kCommTimer)], 0.3);
  EXPECT_DOUBLE_EQ(s.part[static_cast<std::size_t>(Part::kDataTimer)], 0.2);
  EXPECT_NEAR(s.timers_over, 0.2, 1e-12);
  EXPECT_NEAR(s.part[static_cast<std::size_t>(Part::kResidualUntimed)], 0.0, 1e-12);
}

TEST(Stages, DecomposeTimedComputeAndBubble) {
  // 10 iterations of 1 s: forward 0.3 + backward 0.4 per iteration, ideal 5 s, comm 1 s; a
  // pipeline bubble of (4-1)/(8+4-1) = 3/11 of the region (10 - 1 = 9 s): 2.4545 s, taken from
  // the untimed 2 s first, then 0.4545 from the timed compute (7 -> 6.5455 s). Compute below
  // peak 6.5455 - 5 = 1.5455; residual 0.
  RecordInput in;
  in.span = 10;
  in.count = 10;
  in.timers.fill(kUnknown);
  in.timers[static_cast<std::size_t>(Phase::kForward)] = 0.3;
  in.timers[static_cast<std::size_t>(Phase::kBackward)] = 0.4;
  in.timers[static_cast<std::size_t>(Phase::kComm)] = 0.1;
  in.ideal = 5;
  in.bubble_fraction = 3.0 / 11.0;
  const RecordSplit s = decompose(in);
  const double bubble = 9 * 3.0 / 11.0;
  EXPECT_NEAR(s.part[static_cast<std::size_t>(Part::kBubble)], bubble, 1e-12);
  EXPECT_NEAR(s.part[static_cast<std::size_t>(Part::kInefficiency)], 7 - (bubble - 2) - 5, 1e-12);
  EXPECT_NEAR(s.part[static_cast<std::size_t>(Part::kResidualTimed)], 0.0, 1e-12);
  double total = 0;
  for (double p : s.part) total += p;
  EXPECT_NEAR(total, 10.0, 1e-12);
}

TEST(Stages, DecomposeStallExcessGoesToTheTimerThatGrewElseIdle) {
  const std::array<double, kPhaseCount> median{};  // every timer's steady median is 0
  RecordInput in;
  in.span = 3;
  in.timers.fill(kUnknown);
  in.timers[static_cast<std::size_t>(Phase::kData)] = 1.5;
  in.ideal = 0.5;
  in.excess = 2;  // the steady step is 1 s
  in.excess_kind = ExcessKind::kStallIdle;
  in.timer_median = &median;
  // Data grew by 1.5 s: it explains 1.5 of the 2 s; 0.5 s moves from the residual to idle.
  const RecordSplit s = decompose(in);
  EXPECT_DOUBLE_EQ(s.excess_explained, 1.5);
  EXPECT_DOUBLE_EQ(s.excess_moved, 0.5);
  EXPECT_DOUBLE_EQ(s.part[static_cast<std::size_t>(Part::kStallIdle)], 0.5);
  EXPECT_DOUBLE_EQ(s.part[static_cast<std::size_t>(Part::kResidualUntimed)], 0.5);
  EXPECT_DOUBLE_EQ(s.excess_by_bucket[static_cast<std::size_t>(B::kIo)], 1.5);
  // Next to an evaluation, what grew is the evaluation's work: all 2 s go to eval.
  in.excess_kind = ExcessKind::kStallEval;
  const RecordSplit e = decompose(in);
  EXPECT_DOUBLE_EQ(e.part[static_cast<std::size_t>(Part::kStallEval)], 2.0);
  EXPECT_DOUBLE_EQ(e.part[static_cast<std::size_t>(Part::kDataTimer)], 0.0);
}

// ---- events -----------------------------------------------------------------------------

TEST(Stages, EventsFillTheGapThenTheSlowRecordOnce) {
  // Steps of 1 s stamped 100, 101, 105 (3 s gap), 115 (step 4 took 10 s: 9 s over the pace);
  // a 5 s save printed before step 3 fills the 3 s gap and the rest (2 s) cannot go into
  // step 3 (not slow): 2 s more than the clock allows. A 9 s save at step 4 printed after it
  // sits inside step 4's excess.
  mfu::Run run = make_run({{1, 1, 100}, {2, 1, 101}, {3, 1, 105}, {4, 10, 115}});
  Event a;
  a.kind = EventKind::kCheckpointSave;
  a.step = 2;
  a.duration_s = 5;
  a.line = 3;  // printed with step 2's record (line 3), before step 3's (line 4)
  Event b = a;
  b.step = 4;
  b.duration_s = 9;
  b.line = 6;
  run.events = {a, b};
  Records rec = read_records(run);
  const Steady st = [&] {
    Steady s;
    s.median = 1;
    return s;
  }();
  const Clock c = plan_clock(run, rec);
  ASSERT_TRUE(c.use);
  const EventPlan ev = plan_events(run, rec, st, c);
  ASSERT_EQ(ev.events.size(), 2u);
  EXPECT_DOUBLE_EQ(ev.events[0].in_gap, 3.0);
  EXPECT_DOUBLE_EQ(ev.events[0].hosted, 0.0);
  EXPECT_DOUBLE_EQ(ev.events[1].hosted, 9.0);
  EXPECT_EQ(ev.events[1].host, 3u);
  ASSERT_EQ(ev.warnings.size(), 1u);  // the 2 s the clock has no room for
}

}  // namespace
}  // namespace mfu::detail

namespace mfu::detail {
namespace {

/// Two files whose records sit in the table in the other order than their lines: record A
/// (file 1, line 2) first, then B (file 0, line 2), each 1 s unless `b_time` says otherwise.
mfu::Run two_files_out_of_line_order(std::int64_t a_step, std::int64_t b_step, double b_time) {
  mfu::Run run;
  run.inputs = {"rank0.log", "rank1.log"};
  Iteration a;
  a.step = a_step;
  a.time_s = 1;
  a.file = 1;
  a.line = 2;
  Iteration b = a;
  b.step = b_step;
  b.time_s = b_time;
  b.file = 0;
  run.iterations.push_back(a);
  run.iterations.push_back(b);
  return run;
}

/// A checkpoint save of `seconds` printed at line 1 of `file`, at step 1.
Event save_at_line_1(std::uint16_t file, double seconds) {
  Event e;
  e.kind = EventKind::kCheckpointSave;
  e.step = 1;
  e.duration_s = seconds;
  e.file = file;
  e.line = 1;
  return e;
}

TEST(Stages, EventsArePlacedWhateverTheOrderOfTheTable) {
  // A (step 1) then B (step 2). A 5 s save precedes B in file 0 and a 3 s one precedes A in
  // file 1. Both lie outside steps: wall = 1 + 1 + 5 + 3 = 10 s.
  mfu::Run run = two_files_out_of_line_order(1, 2, 1);
  run.events = {save_at_line_1(0, 5), save_at_line_1(1, 3)};
  const Analysis an = analyze(run, AnalyzeOptions{});
  EXPECT_DOUBLE_EQ(an.wall_time_s, 10.0);
  EXPECT_DOUBLE_EQ(an.bucket(BucketId::kCheckpoint)->seconds, 8.0);
}

TEST(Stages, EventsFindTheirHostWhenTheTableIsOutOfLineOrder) {
  // A (step 2) then B (step 1). A 3 s save printed in file 0 before B, at step 1, sits in B's
  // excess: B took 5 s against a 1 s pace, 4 s over. (Walking the table's order instead of
  // the lines' would see A next, which does not cover step 1, and leave the save outside
  // every record.)
  mfu::Run run = two_files_out_of_line_order(2, 1, 5);
  run.events = {save_at_line_1(0, 3)};
  Records rec = read_records(run);
  Steady st;
  st.median = 1;
  const Clock c = plan_clock(run, rec);
  ASSERT_FALSE(c.use);
  const EventPlan ev = plan_events(run, rec, st, c);
  ASSERT_EQ(ev.events.size(), 1u);
  EXPECT_EQ(ev.events[0].before_record, 1u);
  EXPECT_EQ(ev.events[0].host, 1u);
  EXPECT_DOUBLE_EQ(ev.events[0].hosted, 3.0);
  EXPECT_DOUBLE_EQ(ev.outside_total, 0.0);
}

}  // namespace
}  // namespace mfu::detail
