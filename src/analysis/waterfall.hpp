#pragma once
// Accumulates wall time into the named buckets, each with how it is known.

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/analysis.hpp"

namespace mfu::detail {

enum class B : std::size_t {
  kCompute,
  kInefficiency,
  kComm,
  kIo,
  kIdle,
  kCheckpoint,
  kRestart,
  kStartup,
  kEval,
  kOther
};
inline constexpr std::size_t kBucketCount = 10;

class Waterfall {
 public:
  /// Adds `seconds` to bucket `b`, known as `src`; `what` names the part for the detail line.
  void add(B b, double seconds, BucketSource src, std::string_view what);
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
  // A bucket has a handful of parts: a linear search beats a map on every record.
  std::array<std::vector<Part>, kBucketCount> parts_;
};

[[nodiscard]] const char* bucket_label(const std::string& name);

}  // namespace mfu::detail
