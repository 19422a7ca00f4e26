#pragma once
// Hardware facts that any log may print, whatever the framework: the nvidia-smi table, the
// device name torch reports, launcher world sizes. Used by every text parser on lines that are
// not its own records.

#include <cstdint>
#include <string_view>

#include "ingest/parser.hpp"

namespace mfu::detail {

/// Looks at one line for GPU name/count hints and records them (never overwriting).
/// Cheap: returns at once for lines without the trigger words.
class CommonMetaScanner {
 public:
  void scan(std::string_view line, std::uint64_t number, RunBuilder& out);
  void finish(RunBuilder& out);

 private:
  int smi_gpus_ = 0;  // rows of an nvidia-smi table
  bool in_smi_ = false;
  std::uint64_t smi_line_ = 0;
};

}  // namespace mfu::detail
