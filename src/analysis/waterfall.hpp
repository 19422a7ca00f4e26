#pragma once
// Accumulates wall time into the buckets, each part remembering how it is known.

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/analysis.hpp"

namespace mfu::detail {

using B = BucketId;

class Waterfall {
 public:
  /// Adds `seconds` to bucket `b`, known as `src`; `what` names the part for the detail line.
  /// A negative or non-finite part is a bug in mfu (InternalError); rounding noise below a
  /// microsecond is added to the total without a part, so the sum stays exact.
  void add(B b, double seconds, BucketSource src, std::string_view what);
  /// Adds every bucket and part of `other` (its parts after this one's, in its order).
  void add(const Waterfall& other);
  /// Moves `seconds` of bucket `from` (its parts shrink in proportion) to `to`, known as `src`.
  /// More than `from` holds is a bug in mfu (InternalError).
  void reassign(B from, B to, double seconds, BucketSource src, std::string_view what);
  [[nodiscard]] double seconds(B b) const { return seconds_[static_cast<std::size_t>(b)]; }
  [[nodiscard]] double total() const;
  /// Finished buckets with labels, fractions of `wall`, and details.
  [[nodiscard]] std::vector<Bucket> buckets(double wall, double gpus) const;

 private:
  std::array<double, kBucketCount> seconds_{};
  struct Part {
    std::string what;
    double seconds = 0;
    BucketSource source = BucketSource::kNone;
  };
  // A bucket has a handful of parts: a linear search beats a map.
  std::array<std::vector<Part>, kBucketCount> parts_;
};

}  // namespace mfu::detail
