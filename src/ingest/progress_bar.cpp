// tqdm progress bars (see progress_bar.hpp).
#include "ingest/progress_bar.hpp"

#include "text.hpp"

namespace mfu::detail {

std::optional<double> clock_time(std::string_view s) {
  double total = 0;
  int parts = 0;
  for (auto part : split(s, ':')) {
    auto v = parse_double(trim(part));
    if (!v || *v < 0) return std::nullopt;
    total = total * 60 + *v;
    ++parts;
  }
  return parts >= 2 && parts <= 3 ? std::optional<double>(total) : std::nullopt;
}

std::optional<BarUpdate> parse_bar(std::string_view t) {
  const std::size_t open = t.rfind(" [");
  if (open == std::string_view::npos) return std::nullopt;
  const std::size_t lt = t.find('<', open), close = t.rfind(']');
  if (lt == std::string_view::npos || close == std::string_view::npos || close < lt)
    return std::nullopt;
  std::string_view counts = t.substr(0, open);
  const std::size_t bar = counts.rfind('|');
  if (bar != std::string_view::npos) counts = counts.substr(bar + 1);
  const auto slash = counts.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto n = parse_double(trim(counts.substr(0, slash)));
  const auto total = parse_double(trim(counts.substr(slash + 1)));
  const auto elapsed = clock_time(t.substr(open + 2, lt - open - 2));
  if (!n || !total || !elapsed || *total <= 0 || *n < 0 || *n > *total) return std::nullopt;
  BarUpdate b{*n, *total, *elapsed, {}};
  const std::size_t comma = t.find(',', lt);
  if (comma != std::string_view::npos && comma < close)
    b.rest = t.substr(comma + 1, close - comma - 1);
  return b;
}

std::optional<double> bar_seconds_per_step(const BarUpdate& b) {
  std::string_view r = trim(b.rest);
  r = r.substr(0, r.find(','));
  const bool per_second = ends_with(r, "it/s");
  if (!per_second && !ends_with(r, "s/it")) return std::nullopt;
  const auto v = parse_double(trim(r.substr(0, r.size() - 4)));
  if (!v || !(*v > 0)) return std::nullopt;
  return per_second ? 1.0 / *v : *v;
}

}  // namespace mfu::detail
