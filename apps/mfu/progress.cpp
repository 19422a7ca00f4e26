#include "progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "mfu/units.hpp"

namespace mfu::cli {
namespace {

/// What the inputs hold on disk: files, and the files one level inside directories (as
/// ingest reads them). Stdin and anything unreadable count 0.
std::uint64_t input_bytes(const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::uint64_t total = 0;
  for (const auto& p : inputs) {
    std::error_code ec;
    if (p == "-") continue;
    if (fs::is_directory(p, ec)) {
      for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
        if (std::error_code e2; it->is_regular_file(e2)) total += it->file_size(e2);
    } else if (const auto n = fs::file_size(p, ec); !ec) {
      total += n;
    }
  }
  return total;
}

std::string bytes_text(double b) {
  return format_number(b / 1e6, 3) + " MB";
}

}  // namespace

ProgressLine::ProgressLine(const std::vector<std::string>& inputs, const GlobalOptions& g) {
  if (g.quiet || ::isatty(STDERR_FILENO) != 1) return;
  start_bytes_ = bytes_read_so_far();
  total_bytes_ = input_bytes(inputs);
  thread_ = std::thread([this] { run(); });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ProgressLine::run() {
  using namespace std::chrono_literals;
  std::unique_lock<std::mutex> lock(mutex_);
  // Inputs read in under a second never show a line.
  if (wake_.wait_for(lock, 1s, [this] { return stop_; })) return;
  bool drawn = false;
  do {
    const double done = static_cast<double>(bytes_read_so_far() - start_bytes_);
    const std::string line = total_bytes_ > 0
                                 ? fmt::format("mfu: reading {} of {} ({:.0f}%)", bytes_text(done),
                                               bytes_text(double(total_bytes_)),
                                               std::min(99.0, 100.0 * done / double(total_bytes_)))
                                 : fmt::format("mfu: reading {}", bytes_text(done));
    std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
    std::fflush(stderr);
    drawn = true;
  } while (!wake_.wait_for(lock, 250ms, [this] { return stop_; }));
  if (drawn) {
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
  }
}

Run ingest_with_progress(const std::vector<std::string>& inputs, const IngestOptions& options,
                         const GlobalOptions& g) {
  ProgressLine progress(inputs, g);
  return ingest(inputs, options);
}

}  // namespace mfu::cli
