#pragma once
// Where a report goes: stdout, or a file. A regular file is written to a temporary beside it
// and renamed on commit(), so a failed run leaves the previous report intact and the target
// keeps its mode; a device or FIFO (/dev/null, a named pipe) is written through, never
// replaced; a target that is one of the inputs, or read-only, is refused before any work.
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace mfu::cli {

class Output {
 public:
  /// Opens the target now, so a bad path fails before the long work. `inputs` are the paths
  /// the command reads (a target equal to one of them is refused).
  explicit Output(const std::string& path, const std::vector<std::string>& inputs = {});
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  std::ostream& stream();
  /// Flushes, and moves a temporary into place. Throws mfu::Error on I/O failure.
  void commit();
  [[nodiscard]] bool to_stdout() const { return path_.empty(); }

 private:
  std::string path_;
  std::string temp_;  ///< empty when writing through (stdout, a device, a FIFO)
  std::unique_ptr<std::ofstream> file_;
  bool committed_ = false;
};

/// Flushes stdout; throws mfu::Error when the write failed (a full disk, /dev/full), but not
/// when the reader closed a pipe (mfu ... | head), which is not the user's error.
void flush_stdout();

}  // namespace mfu::cli
