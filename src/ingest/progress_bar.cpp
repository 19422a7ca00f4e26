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

namespace {

/// "2.13it/s" or "41.36s/it" at the start of `s` -> seconds per iteration; 0 when neither.
double rate_seconds_per_it(std::string_view s) {
  std::string_view t = trim(s);
  const auto v = take_number(t);
  if (!v || !(*v > 0)) return 0;
  if (starts_with(t, "it/s")) return 1 / *v;
  if (starts_with(t, "s/it")) return *v;
  return 0;
}

}  // namespace

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
  BarUpdate b{*n, *total, *elapsed, 0, {}};
  const std::size_t comma = t.find(',', lt);
  if (comma != std::string_view::npos && comma < close) {
    b.rest = t.substr(comma + 1, close - comma - 1);
    b.seconds_per_it = rate_seconds_per_it(b.rest);
  }
  return b;
}

}  // namespace mfu::detail
