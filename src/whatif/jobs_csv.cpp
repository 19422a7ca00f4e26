// Job traces for the fragmentation replay: mfu's own CSV (submit_s,gpus,duration_s) and the
// column names of public GPU-cluster traces (SenseTime Helios cluster_log.csv, Shanghai AI Lab
// AcmeTrace trace_*.csv: gpu_num, submit_time "YYYY-MM-DD HH:MM:SS", duration, start/end_time).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "io/csv.hpp"
#include "io/line_reader.hpp"
#include "io/source.hpp"
#include "io/timestamp.hpp"
#include "mfu/error.hpp"
#include "mfu/whatif.hpp"

namespace mfu {
namespace {

std::string lower_trim(std::string_view s) {
  // A UTF-8 byte-order mark starts some exported CSVs.
  if (s.substr(0, 3) == "\xef\xbb\xbf") s.remove_prefix(3);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int find_column(const std::vector<std::string>& header, std::initializer_list<const char*> names) {
  for (const char* n : names)
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == n) return static_cast<int>(i);
  return -1;
}

/// Seconds: a plain number, or a civil date-time "YYYY-MM-DD HH:MM:SS" (or with a 'T').
std::optional<double> parse_time(std::string_view t) {
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\r')) t.remove_suffix(1);
  if (t.empty()) return std::nullopt;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  double sec = 0;
  const std::string s(t);
  if (s.size() >= 19 && s[4] == '-' && s[7] == '-' &&
      std::sscanf(s.c_str(), "%4d-%2d-%2d%*1[ T]%2d:%2d:%lf", &y, &mo, &d, &h, &mi, &sec) == 6)
    return detail::unix_seconds(y, mo, d, h, mi, sec);
  double v = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

class JobParser {
 public:
  explicit JobParser(std::string origin) : origin_(std::move(origin)) {}

  void line(std::string_view text, std::uint64_t line_no) {
    if (lower_trim(text).empty()) return;
    auto fields = detail::split_csv(text);
    if (!have_header_) {
      header(fields, line_no);
      return;
    }
    ++trace_.rows;
    auto field = [&](int col) -> std::string_view {
      return col >= 0 && static_cast<std::size_t>(col) < fields.size()
                 ? std::string_view(fields[col])
                 : std::string_view();
    };
    auto fail = [&](const std::string& what) {
      throw Error(fmt::format("{}:{}: {}", origin_, line_no, what),
                  "fix or drop the row; the columns are submit_s,gpus,duration_s (seconds)");
    };
    const auto submit = parse_time(field(submit_));
    if (!submit)
      fail(fmt::format("the submission time '{}' is not a number of seconds or a date-time",
                       field(submit_)));
    const auto gpus = parse_time(field(gpus_));  // a plain number
    if (!gpus || *gpus < 0 || std::fabs(*gpus - std::round(*gpus)) > 1e-9 || *gpus > 1e7)
      fail(fmt::format("the GPU count '{}' is not a whole number >= 0", field(gpus_)));
    // Kept where it reads; a trace with a duration may leave it empty or "None" for jobs that
    // never started, and only a duration computed from it needs it.
    const std::optional<double> start = start_ >= 0 ? parse_time(field(start_)) : std::nullopt;
    double duration = 0;
    if (duration_ >= 0) {
      const auto d = parse_time(field(duration_));
      if (!d) fail(fmt::format("the duration '{}' is not a number of seconds", field(duration_)));
      duration = *d;
    } else {
      const auto s = parse_time(field(start_)), e = parse_time(field(end_));
      if (!s || !e) fail("start_time and end_time must both be given (seconds or date-times)");
      duration = *e - *s;
    }
    if (duration < 0) fail(fmt::format("the duration is negative ({} s)", duration));
    if (*gpus == 0) {
      ++trace_.zero_gpu_jobs;
      return;
    }
    Job j;
    j.submit_s = *submit;
    j.gpus = static_cast<int>(std::lround(*gpus));
    j.duration_s = duration;
    if (start) j.start_s = *start;
    if (state_ >= 0) j.state = lower_trim(field(state_));
    for (char& c : j.state) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    j.name = name_ >= 0 ? std::string(field(name_)) : fmt::format("line {}", line_no);
    trace_.jobs.push_back(std::move(j));
  }

  JobTrace finish() {
    if (!have_header_)
      throw Error(fmt::format("{}: the job trace is empty", origin_),
                  "give a CSV with a header line");
    std::stable_sort(trace_.jobs.begin(), trace_.jobs.end(),
                     [](const Job& a, const Job& b) { return a.submit_s < b.submit_s; });
    if (!trace_.jobs.empty()) {
      const double t0 = trace_.jobs.front().submit_s;
      for (auto& j : trace_.jobs) {
        j.submit_s -= t0;
        j.start_s -= t0;  // NaN stays NaN
      }
    }
    return std::move(trace_);
  }

 private:
  void header(const std::vector<std::string>& raw, std::uint64_t line_no) {
    std::vector<std::string> h;
    for (const auto& f : raw) h.push_back(lower_trim(f));
    submit_ = find_column(
        h, {"submit_s", "submit_time", "submitted_time", "submit", "arrival_s", "arrival_time"});
    gpus_ = find_column(h, {"gpus", "gpu_num", "num_gpus", "gpu_count", "n_gpus", "gpu"});
    duration_ = find_column(h, {"duration_s", "duration", "run_time", "runtime", "run_time_s"});
    start_ = find_column(h, {"start_time", "start_s"});
    end_ = find_column(h, {"end_time", "end_s"});
    name_ = find_column(h, {"name", "job_name", "job_id", "jobid", "id"});
    state_ = find_column(h, {"state", "status", "job_state"});
    std::vector<std::string> missing;
    if (submit_ < 0) missing.emplace_back("submit_s");
    if (gpus_ < 0) missing.emplace_back("gpus");
    if (duration_ < 0 && (start_ < 0 || end_ < 0))
      missing.emplace_back("duration_s (or start_time and end_time)");
    if (!missing.empty()) {
      std::string found;
      for (const auto& f : h) found += (found.empty() ? "" : ",") + f;
      std::string need;
      for (const auto& m : missing) need += (need.empty() ? "" : ", ") + m;
      throw Error(fmt::format("{}:{}: the job trace has no column {} (header: {})", origin_,
                              line_no, need, found),
                  "the first line must name the columns, at least submit_s,gpus,duration_s");
    }
    have_header_ = true;
  }

  std::string origin_;
  bool have_header_ = false;
  int submit_ = -1, gpus_ = -1, duration_ = -1, start_ = -1, end_ = -1, name_ = -1, state_ = -1;
  JobTrace trace_;
};

JobTrace read_jobs(detail::ByteSource& src, const std::string& origin) {
  detail::LineReader reader(src, std::size_t{1} << 20);
  JobParser parser(origin);
  std::string_view line;
  while (reader.next(line)) parser.line(line, reader.line_number());
  if (src.truncated())
    throw Error(fmt::format("{}: the compressed job trace is cut off", origin),
                "give the complete file");
  return parser.finish();
}

}  // namespace

JobTrace parse_jobs(std::string_view csv_text, const std::string& origin) {
  auto src = detail::memory_source(csv_text);
  return read_jobs(*src, origin);
}

JobTrace load_jobs(const std::string& path) {
  auto src = detail::open_source(path);
  return read_jobs(*src, path);
}

}  // namespace mfu
