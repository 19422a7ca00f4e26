#pragma once
// gtest expectations that two combinings of rank streams (combine_rank_streams on a fast path
// and on the reference path) agree bit for bit: every field of every record, the incarnations,
// the counts and every rank's summary.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ingest/rank_streams.hpp"

namespace mfu::test {

inline bool same_double(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

inline void expect_same_records(const IterationTable& a, const IterationTable& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Iteration x = a[i], y = b[i];
    SCOPED_TRACE(i);
    ASSERT_EQ(x.step, y.step);
    ASSERT_EQ(x.count, y.count);
    ASSERT_EQ(x.line, y.line);
    ASSERT_EQ(x.rank, y.rank);
    ASSERT_EQ(x.file, y.file);
    const double xs[] = {x.time_s,
                         x.timestamp_s,
                         x.tokens,
                         x.samples,
                         x.loss,
                         x.model_flops,
                         x.reported_flops_per_gpu,
                         x.reported_mfu};
    const double ys[] = {y.time_s,
                         y.timestamp_s,
                         y.tokens,
                         y.samples,
                         y.loss,
                         y.model_flops,
                         y.reported_flops_per_gpu,
                         y.reported_mfu};
    for (std::size_t f = 0; f < std::size(xs); ++f) ASSERT_TRUE(same_double(xs[f], ys[f])) << f;
    for (std::size_t p = 0; p < kPhaseCount; ++p)
      ASSERT_TRUE(same_double(x.phase[p], y.phase[p])) << "phase " << p;
  }
}

inline void expect_same_streams(const std::vector<RankStream>& a,
                                const std::vector<RankStream>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].rank, b[k].rank);
    EXPECT_EQ(a[k].records, b[k].records);
    EXPECT_EQ(a[k].restarts, b[k].restarts);
    EXPECT_EQ(a[k].slowest_steps, b[k].slowest_steps);
    EXPECT_TRUE(same_double(a[k].mean_time_s, b[k].mean_time_s));
    EXPECT_TRUE(same_double(a[k].mean_data_s, b[k].mean_data_s));
    EXPECT_TRUE(same_double(a[k].first_timestamp_s, b[k].first_timestamp_s));
    EXPECT_TRUE(same_double(a[k].last_timestamp_s, b[k].last_timestamp_s));
  }
}

inline void expect_same_job(const detail::JobRecords& fast, const detail::JobRecords& ref) {
  expect_same_records(fast.table, ref.table);
  EXPECT_EQ(fast.incarnations, ref.incarnations);
  EXPECT_EQ(fast.reordered, ref.reordered);
  EXPECT_EQ(fast.duplicates, ref.duplicates);
  EXPECT_EQ(fast.micro_batches, ref.micro_batches);
  EXPECT_EQ(fast.rank_records, ref.rank_records);
  EXPECT_EQ(fast.incarnations_disagree, ref.incarnations_disagree);
  expect_same_streams(fast.streams, ref.streams);
}

}  // namespace mfu::test
