#include "analysis/waterfall.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "mfu/error.hpp"
#include "mfu/units.hpp"

namespace mfu::detail {

void Waterfall::add(B b, double seconds, BucketSource src, std::string_view what) {
  const auto i = static_cast<std::size_t>(b);
  if (!std::isfinite(seconds) || seconds < -1e-6)
    throw InternalError(
        fmt::format("the waterfall part '{}' of bucket {} is {} s", what, bucket_key(b), seconds));
  seconds_[i] += seconds;
  if (!(seconds > 0)) return;
  auto& parts = parts_[i];
  auto it = std::find_if(parts.begin(), parts.end(), [&](const Part& p) { return p.what == what; });
  if (it == parts.end()) {
    parts.push_back(Part{std::string(what), seconds, src});
    return;
  }
  it->seconds += seconds;
  // A part measured anywhere stays measured; inferred beats residual.
  if (static_cast<int>(src) < static_cast<int>(it->source)) it->source = src;
}

void Waterfall::add(const Waterfall& other) {
  for (std::size_t i = 0; i < kBucketCount; ++i) {
    seconds_[i] += other.seconds_[i];
    for (const Part& p : other.parts_[i]) {
      auto& parts = parts_[i];
      auto it =
          std::find_if(parts.begin(), parts.end(), [&](const Part& q) { return q.what == p.what; });
      if (it == parts.end()) {
        parts.push_back(p);
        continue;
      }
      it->seconds += p.seconds;
      if (static_cast<int>(p.source) < static_cast<int>(it->source)) it->source = p.source;
    }
  }
}

void Waterfall::reassign(B from, B to, double seconds, BucketSource src, std::string_view what) {
  const auto f = static_cast<std::size_t>(from);
  if (!std::isfinite(seconds) || seconds < 0 || seconds > seconds_[f] * (1 + 1e-12) + 1e-9)
    throw InternalError(fmt::format("moving {} s out of bucket {}, which holds {} s", seconds,
                                    bucket_key(from), seconds_[f]));
  seconds = std::min(seconds, seconds_[f]);
  const double keep = seconds_[f] > 0 ? 1 - seconds / seconds_[f] : 0;
  for (auto& p : parts_[f]) p.seconds *= keep;
  std::erase_if(parts_[f], [](const Part& p) { return !(p.seconds > 1e-9); });
  seconds_[f] -= seconds;
  add(to, seconds, src, what);
}

double Waterfall::total() const {
  double t = 0;
  for (double s : seconds_) t += s;
  return t;
}

std::vector<Bucket> Waterfall::buckets(double wall, double gpus) const {
  std::vector<Bucket> out;
  for (std::size_t i = 0; i < kBucketCount; ++i) {
    const BucketInfo& info = bucket_info(static_cast<B>(i));
    Bucket b;
    b.name = info.key;
    b.label = info.label;
    b.seconds = seconds_[i];
    // Rounding noise of parts that cancel (a residual of -1e-17 s) is shown as nothing.
    if (b.seconds < 0 && b.seconds > -1e-12 * std::max(1.0, wall)) b.seconds = 0;
    b.fraction = wall > 0 ? b.seconds / wall : 0;
    b.gpu_hours = std::isfinite(gpus) ? b.seconds * gpus / 3600.0 : 0;
    // The bucket is as known as its largest part.
    double biggest = -1;
    std::vector<std::pair<double, std::string>> items;
    for (const auto& p : parts_[i]) {
      if (p.seconds > biggest) {
        biggest = p.seconds;
        b.source = p.source;
      }
      items.emplace_back(p.seconds, fmt::format("{} {} ({})", p.what, format_duration(p.seconds),
                                                to_string(p.source)));
    }
    std::sort(items.begin(), items.end(),
              [](const auto& x, const auto& y) { return x.first > y.first; });
    std::string detail;
    for (const auto& [s, text] : items) detail += (detail.empty() ? "" : "; ") + text;
    b.detail = detail;
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace mfu::detail
