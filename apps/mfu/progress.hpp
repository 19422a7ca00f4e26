#pragma once
// The progress line on stderr while inputs are read.

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli_common.hpp"
#include "mfu/ingest.hpp"
#include "mfu/run.hpp"

namespace mfu::cli {

/// "mfu: reading 1.2 GB of 3.4 GB (35%)" on stderr, redrawn four times a second from the
/// second second on, and erased when reading ends: only when stderr is a terminal and not
/// --quiet, so pipes and CI logs never see it.
class ProgressLine {
 public:
  ProgressLine(const std::vector<std::string>& inputs, const GlobalOptions& g);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  void run();

  std::uint64_t start_bytes_ = 0;
  std::uint64_t total_bytes_ = 0;  ///< the inputs' sizes on disk; 0 when unknown (stdin)
  bool stop_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
};

/// ingest() with the progress line.
[[nodiscard]] Run ingest_with_progress(const std::vector<std::string>& inputs,
                                       const IngestOptions& options, const GlobalOptions& g);

}  // namespace mfu::cli
