#pragma once
// Exact order statistics of values read from a source more than once, without a buffer of
// them: a histogram of the values' ordered bit patterns narrows each wanted rank to one bucket,
// buckets too full are refined by a second histogram, and the few values of the final buckets
// are selected exactly. A pass costs a read of the source (a few ns a value, sequential),
// where nth_element on a copy costs a buffer of 8 B a value and several passes of random swaps.
//
// The k-th smallest value is the same double std::nth_element returns (zeros of either sign
// are one value, returned as +0). The counting and collecting passes run on several threads
// (analysis/parallel.hpp); counts and the values collected do not depend on the cuts.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "analysis/parallel.hpp"
#include "analysis/stats.hpp"
#include "mfu/analysis.hpp"
#include "mfu/error.hpp"

namespace mfu::detail {

/// A finite double's bits, mapped so that unsigned order is numeric order (-0 as +0).
[[nodiscard]] inline std::uint64_t order_key(double v) {
  if (v == 0) v = 0.0;
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return (b >> 63) ? ~b : b | (std::uint64_t{1} << 63);
}
[[nodiscard]] inline double from_order_key(std::uint64_t k) {
  const std::uint64_t b = (k >> 63) ? k & ~(std::uint64_t{1} << 63) : ~k;
  double v = 0;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

/// Values read in ranges of items: read(lo, hi, f) calls f(double) for the values of items
/// [lo, hi) of `items` (an item may yield none), the same values on every call. Its passes
/// run on up to `threads` threads.
template <class Read>
struct Source {
  Read read;
  std::size_t items = 0;
  unsigned threads = 1;

  /// Every value, on the calling thread.
  template <class F>
  void operator()(F&& f) const {
    read(std::size_t{0}, items, f);
  }
  /// The same items, each value v passed through g(v, f), which calls f for what it yields.
  template <class G>
  auto map(G g) const {
    auto mapped = [read = read, g](std::size_t lo, std::size_t hi, auto&& f) {
      read(lo, hi, [&](double v) { g(v, f); });
    };
    return Source<decltype(mapped)>{mapped, items, threads};
  }
  /// The finite values alone.
  auto finite() const {
    return map([](double v, auto&& f) {
      if (std::isfinite(v)) f(v);
    });
  }
  /// The ranges of items its passes read on a thread each.
  [[nodiscard]] Parts parts() const { return parts_of(items, threads); }
};

template <class Read>
Source<Read> make_source(Read read, std::size_t items, unsigned threads = 1) {
  return Source<Read>{std::move(read), items, threads};
}

/// The values of ranks `ranks` (0-based, each below the number of values) of the finite
/// values of `source` (a Source). `lo` and `hi` bound the values (the smallest and the largest).
template <class Src>
std::vector<double> select_ranks(const Src& source, const std::vector<std::size_t>& ranks,
                                 double lo, double hi) {
  // 2^16 buckets of 32-bit counts: a 256 KB histogram that stays in the L2 cache of the
  // machines this runs on (a judgement, not a published figure).
  constexpr unsigned kBits = 16;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  // Values few enough to select from a copy: a bucket of a clustered run (step times within
  // 3% of 1 s, a 600 s stall widening the range) holds ~1% of the values, so 65,536 spares a
  // refinement pass over millions of records for a copy of at most 512 KB (a judgement from
  // the 1 GiB benchmark file, not a published figure).
  constexpr std::size_t kSmall = std::size_t{1} << 16;
  struct Target {
    std::size_t rank;     // what is left of it within [first, last]
    std::uint64_t first;  // the key range that holds it
    std::uint64_t last;
    bool done = false;
  };
  std::vector<Target> t;
  for (std::size_t r : ranks) t.push_back({r, order_key(lo), order_key(hi)});
  // 32-bit counts: a run of 2^32 records (over 100 GB of columns) does not fit in memory.
  std::vector<std::uint32_t> hist(kBuckets);
  auto shift_of = [&](const Target& x) {
    const unsigned width = std::bit_width(x.last - x.first);
    return width > kBits ? width - kBits : 0;
  };
  // Counts the values of [first, last] in buckets of 2^shift keys: a histogram per part, added.
  const Parts parts = source.parts();
  std::vector<std::vector<std::uint32_t>> part_hist(parts.size() > 1 ? parts.size() - 1 : 0);
  auto count = [&](std::uint64_t first, std::uint64_t last, unsigned shift) {
    run_parts(parts, [&](std::size_t p, std::size_t from, std::size_t to) {
      std::vector<std::uint32_t>& h = p == 0 ? hist : part_hist[p - 1];
      h.assign(kBuckets, 0);
      source.read(from, to, [&](double v) {
        const std::uint64_t k = order_key(v);
        if (k >= first && k <= last) ++h[(k - first) >> shift];
      });
    });
    for (const auto& h : part_hist)
      for (std::size_t b = 0; b < kBuckets; ++b) hist[b] += h[b];
  };
  // Narrows x to the bucket that holds its rank; true when that bucket is small enough.
  auto narrow = [&](Target& x, unsigned shift) {
    std::size_t b = 0, acc = 0;
    while (b < kBuckets && acc + hist[b] <= x.rank) acc += hist[b++];
    if (b == kBuckets)  // a source that yields other values on another pass
      throw InternalError("order statistics: fewer values in range than the rank sought");
    x.rank -= acc;
    const std::uint64_t first = x.first + (static_cast<std::uint64_t>(b) << shift);
    x.last = std::min(x.last, first + ((std::uint64_t{1} << shift) - 1));
    x.first = first;
    x.done = x.first == x.last;  // one key: every value there is the answer
    return x.done || hist[b] <= kSmall;
  };
  // The first pass is shared (every target starts from [lo, hi]); a target whose bucket is
  // still full (values clustered tighter than 1/65536 of the range) is refined on its own.
  if (t.empty()) return {};
  if (t.front().first == t.front().last) return std::vector<double>(t.size(), lo == 0 ? 0.0 : lo);
  const unsigned shift0 = shift_of(t.front());
  const std::uint64_t first0 = t.front().first, last0 = t.front().last;
  count(first0, last0, shift0);
  std::vector<char> small(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) small[i] = narrow(t[i], shift0);
  // (All targets narrow on the shared histogram before any refinement overwrites it.)
  for (std::size_t i = 0; i < t.size(); ++i) {
    while (!small[i]) {
      const unsigned shift = shift_of(t[i]);
      count(t[i].first, t[i].last, shift);
      small[i] = narrow(t[i], shift);
    }
  }
  // One pass collects the values of every target's bucket (a list per part, joined: the
  // selection does not depend on their order); each is selected from its copy. Targets with
  // the same bucket (a quantile's two neighbouring ranks, mostly) share one list.
  std::vector<std::size_t> owner(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    owner[i] = i;
    for (std::size_t j = 0; j < i; ++j)
      if (!t[j].done && t[j].first == t[i].first && t[j].last == t[i].last) {
        owner[i] = j;
        break;
      }
  }
  // The first pass's buckets that hold a target (refining narrows within one): a value
  // outside them is passed over after one lookup, not a test a target (the test a target
  // was most of the pass).
  std::vector<std::uint8_t> wanted(kBuckets, 0);
  for (const Target& x : t)
    if (!x.done) wanted[(x.first - first0) >> shift0] = 1;
  std::vector<std::vector<std::vector<double>>> part_held(
      std::max<std::size_t>(parts.size(), 1), std::vector<std::vector<double>>(t.size()));
  run_parts(parts, [&](std::size_t p, std::size_t from, std::size_t to) {
    auto& held = part_held[p];
    source.read(from, to, [&](double v) {
      const std::uint64_t k = order_key(v);
      if (k < first0 || k > last0 || !wanted[(k - first0) >> shift0]) return;
      for (std::size_t i = 0; i < t.size(); ++i)
        if (owner[i] == i && !t[i].done && k >= t[i].first && k <= t[i].last)
          held[i].push_back(v == 0 ? 0.0 : v);
    });
  });
  std::vector<std::vector<double>>& held = part_held.front();
  for (std::size_t p = 1; p < part_held.size(); ++p)
    for (std::size_t i = 0; i < t.size(); ++i)
      held[i].insert(held[i].end(), part_held[p][i].begin(), part_held[p][i].end());
  std::vector<double> out(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].done) {
      out[i] = from_order_key(t[i].first);
      continue;
    }
    auto& h = held[owner[i]];
    if (t[i].rank >= h.size())  // a source that yields other values on another pass
      throw InternalError("order statistics: fewer values collected than the rank sought");
    std::nth_element(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(t[i].rank), h.end());
    out[i] = h[t[i].rank];
  }
  return out;
}

/// Quantiles `qs` of the n values of `source` (all finite, within [lo, hi]) by the rule of
/// quantile_position (stats.hpp).
template <class Src>
std::vector<double> quantiles_from(const Src& source, std::size_t n, double lo, double hi,
                                   const std::vector<double>& qs) {
  std::vector<std::size_t> ranks;
  std::vector<QuantilePosition> pos;
  for (double q : qs) {
    pos.push_back(quantile_position(q, n));
    ranks.push_back(pos.back().rank);
    ranks.push_back(std::min(pos.back().rank + 1, n - 1));
  }
  const std::vector<double> got = select_ranks(source, ranks, lo, hi);
  std::vector<double> out;
  for (std::size_t j = 0; j < qs.size(); ++j) {
    const double a = got[2 * j], f = pos[j].fraction;
    out.push_back(f == 0 ? a : a + f * (got[2 * j + 1] - a));
  }
  return out;
}

/// The serial part of a distribution: count, min, max and the weighted sum, added in the
/// values' order as distribution() adds them (a sum's bits depend on its order).
struct RunningSum {
  std::size_t n = 0;
  double sum = 0, wsum = 0;
  // From the infinities the first finite value takes both (x < inf), as it would start them.
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();

  /// Adds v[0..m) of weight `weight` each, out of line: inlined into a pass (a callback a
  /// value, or a loop over a block), GCC 12 kept min, max and the weights' sum in memory, a
  /// store and a load a value on each chain, and the serial pass took as long as the
  /// selection's parallel passes together (BM_DistributionOfColumn).
  [[gnu::noinline]] void add(const double* v, std::size_t m, double weight) {
    double s = sum, ws = wsum, lo = min, hi = max;
    for (std::size_t i = 0; i < m; ++i) {
      s += v[i] * weight;
      ws += weight;
      lo = v[i] < lo ? v[i] : lo;  // std::min(lo, v[i])
      hi = hi < v[i] ? v[i] : hi;  // std::max(hi, v[i])
    }
    sum = s, wsum = ws, min = lo, max = hi;
    n += m;
  }
};

/// The running sum of the finite values of `source` in order, of weight `weight` each,
/// gathered a few hundred at a time into a local block and added from there.
template <class Src>
RunningSum running_sum(const Src& source, double weight) {
  RunningSum run;
  std::array<double, 256> block{};
  std::size_t k = 0;
  source([&](double v) {
    if (!std::isfinite(v)) return;
    block[k++] = v;
    if (k == block.size()) {
      run.add(block.data(), k, weight);
      k = 0;
    }
  });
  if (k > 0) run.add(block.data(), k, weight);
  return run;
}

/// Count, mean, min, max, median, p05 and p95 (when `tails`) and MAD of the finite values of
/// `source`, every one of weight `weight` (the iterations each record covers): the numbers
/// distribution() gives for a buffer of them, bit for bit, from passes over the source (the sum
/// on the calling thread, in the buffer's order; the selection on the source's threads).
template <class Src>
Distribution distribution_of(const Src& source, double weight, bool tails) {
  // The same sums, in the same order, as distribution() over Weighted records.
  const RunningSum run = running_sum(source, weight);
  const std::size_t n = run.n;
  if (n == 0 || !(weight > 0)) return Distribution{};
  Distribution d;
  d.min = run.min;
  d.max = run.max;
  d.count = n;
  d.mean = run.sum / run.wsum;
  const auto finite = source.finite();
  const std::vector<double> q =
      quantiles_from(finite, n, d.min, d.max,
                     tails ? std::vector<double>{0.5, 0.05, 0.95} : std::vector<double>{0.5});
  d.median = q[0];
  if (tails) {
    d.p05 = q[1];
    d.p95 = q[2];
  }
  const double med = d.median;
  const auto deviations = finite.map([med](double v, auto&& f) { f(std::fabs(v - med)); });
  // |v - median| is at most the larger distance from the median to an end.
  const double dev_hi = std::max({d.max - med, med - d.min, 0.0});
  d.mad = quantiles_from(deviations, n, 0.0, dev_hi, {0.5})[0];
  return d;
}

/// distribution() of `size` per-iteration values at(i) (a WeightedF; a hole, a non-finite
/// value or a weight of 0, is left out), bit for bit. When every weight is the same, the order
/// statistics come from passes over them on `threads` threads; else `weighted()` gives them
/// as a buffer for distribution().
template <class At, class Weighted>
Distribution distribution_of_values(std::size_t size, At&& at, unsigned threads,
                                    Weighted&& weighted) {
  auto kept = [](const WeightedF& w) { return std::isfinite(w.value) && w.weight > 0; };
  // distribution()'s sums, in its order, in one pass that also checks every weight is the
  // first one's (else the buffered path).
  float weight = 0;
  for (std::size_t i = 0; i < size; ++i)
    if (const WeightedF w = at(i); kept(w)) {
      weight = w.weight;
      break;
    }
  // The kept slots of [lo, hi), each handed to f.
  auto read_kept = [&at, &kept](std::size_t lo, std::size_t hi, auto&& f) {
    for (std::size_t i = lo; i < hi; ++i)
      if (const WeightedF w = at(i); kept(w)) f(w);
  };
  bool uniform = true;  // written by the serial pass alone
  auto checked = make_source(
      [&read_kept, &uniform, weight](std::size_t lo, std::size_t hi, auto&& f) {
        read_kept(lo, hi, [&](const WeightedF& w) {
          if (w.weight != weight) uniform = false;
          f(static_cast<double>(w.value));
        });
      },
      size);
  const RunningSum run = running_sum(checked, static_cast<double>(weight));
  auto values = make_source(
      [&read_kept](std::size_t lo, std::size_t hi, auto&& f) {
        read_kept(lo, hi, [&](const WeightedF& w) { f(static_cast<double>(w.value)); });
      },
      size, threads);
  if (!uniform) return distribution(weighted(), true);
  const std::size_t n = run.n;
  Distribution d;
  if (n == 0) return d;
  d.min = run.min;
  d.max = run.max;
  d.count = n;
  d.mean = run.sum / run.wsum;
  const std::vector<double> q = quantiles_from(values, n, d.min, d.max, {0.5, 0.05, 0.95});
  d.median = q[0];
  d.p05 = q[1];
  d.p95 = q[2];
  // distribution() keeps each deviation as a float: the same rounding here (rounding keeps
  // order, so the rounded bound still bounds them).
  const double med = d.median;
  const auto deviations = values.map([med](double x, auto&& f) {
    f(static_cast<double>(static_cast<float>(std::fabs(x - med))));
  });
  const double dev_hi =
      static_cast<double>(static_cast<float>(std::max({d.max - med, med - d.min, 0.0})));
  d.mad = quantiles_from(deviations, n, 0.0, dev_hi, {0.5})[0];
  return d;
}

/// The median of the finite values of `source` (NaN when there are none).
template <class Src>
double median_from(const Src& source) {
  struct Range {
    std::size_t n = 0;
    double lo = 0, hi = 0;
  };
  const Parts parts = source.parts();
  std::vector<Range> part_range(parts.size());
  run_parts(parts, [&](std::size_t p, std::size_t from, std::size_t to) {
    Range r;  // on this thread's stack until the part is done (run_parts)
    source.read(from, to, [&](double v) {
      if (!std::isfinite(v)) return;
      r.lo = r.n == 0 ? v : std::min(r.lo, v);
      r.hi = r.n == 0 ? v : std::max(r.hi, v);
      ++r.n;
    });
    part_range[p] = r;
  });
  Range all;
  for (const Range& r : part_range) {
    if (r.n == 0) continue;
    all.lo = all.n == 0 ? r.lo : std::min(all.lo, r.lo);
    all.hi = all.n == 0 ? r.hi : std::max(all.hi, r.hi);
    all.n += r.n;
  }
  if (all.n == 0) return kUnknown;
  return quantiles_from(source.finite(), all.n, all.lo, all.hi, {0.5})[0];
}

/// The median (by quantiles_from's rule) of the non-negative int32 keys `source` hands out,
/// as the values `value(key)` gives (increasing in the key: a column's decimal digits and the
/// timers they stand for); NaN when there are none. Radix selection on the keys themselves:
/// one pass counts their high 16 bits, a second the low 15 bits within the one or two buckets
/// that hold the middle ranks. Two passes, exact, nothing collected (median_from's selection
/// on doubles takes a pass for the range, one to count and one to collect).
template <class Src, class Value>
double median_of_keys(const Src& source, Value&& value) {
  constexpr unsigned kLowBits = 15;
  constexpr std::size_t kHigh = std::size_t{1} << 16, kLow = std::size_t{1} << kLowBits;
  const Parts parts = source.parts();
  const std::size_t part_count = std::max<std::size_t>(parts.size(), 1);
  // Pass 1: the high bits, a histogram per part, added.
  std::vector<std::vector<std::uint32_t>> high(part_count, std::vector<std::uint32_t>(kHigh));
  run_parts(parts, [&](std::size_t p, std::size_t from, std::size_t to) {
    std::uint32_t* h = high[p].data();
    source.read(from, to, [h](std::int32_t key) {
      if (key >= 0) ++h[static_cast<std::uint32_t>(key) >> kLowBits];
    });
  });
  for (std::size_t p = 1; p < part_count; ++p)
    for (std::size_t b = 0; b < kHigh; ++b) high[0][b] += high[p][b];
  std::size_t n = 0;
  for (std::uint32_t c : high[0]) n += c;
  if (n == 0) return kUnknown;
  const QuantilePosition pos = quantile_position(0.5, n);
  // The high bucket of each wanted rank, and the rank within it.
  struct Wanted {
    std::size_t rank, bucket = 0;
  };
  std::array<Wanted, 2> want{{{pos.rank}, {std::min(pos.rank + 1, n - 1)}}};
  for (Wanted& w : want) {
    while (w.rank >= high[0][w.bucket]) w.rank -= high[0][w.bucket++];
  }
  // Pass 2: the low bits within those buckets.
  std::vector<std::array<std::vector<std::uint32_t>, 2>> low(part_count);
  run_parts(parts, [&](std::size_t p, std::size_t from, std::size_t to) {
    for (auto& h : low[p]) h.assign(kLow, 0);
    std::uint32_t* h0 = low[p][0].data();
    std::uint32_t* h1 = low[p][1].data();
    source.read(from, to, [&](std::int32_t key) {
      if (key < 0) return;
      const std::uint32_t k = static_cast<std::uint32_t>(key), b = k >> kLowBits;
      if (b == want[0].bucket) ++h0[k & (kLow - 1)];
      if (b == want[1].bucket) ++h1[k & (kLow - 1)];
    });
  });
  std::array<double, 2> got{};
  for (std::size_t j = 0; j < 2; ++j) {
    std::size_t left = want[j].rank, l = 0;
    for (;; ++l) {
      if (l == kLow)  // a source that yields other keys on another pass
        throw InternalError("median of keys: fewer keys in the bucket than the rank sought");
      std::size_t c = 0;
      for (std::size_t p = 0; p < part_count; ++p) c += low[p][j][l];
      if (left < c) break;
      left -= c;
    }
    got[j] = value(static_cast<std::int32_t>((want[j].bucket << kLowBits) | l));
  }
  return pos.fraction == 0 ? got[0] : got[0] + pos.fraction * (got[1] - got[0]);
}

}  // namespace mfu::detail
