#pragma once
// Pieces of the Megatron log format that other parsers reuse: the pipe-separated iteration
// line (also printed by Megatron-DeepSpeed, NeMo and GPT-NeoX) and the argument names.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/parser.hpp"
#include "mfu/run.hpp"

namespace mfu::detail {

/// The fields of one iteration line ` [ts] iteration N/ M | key: value | ...`.
struct MegatronIterationLine {
  std::int64_t iteration = -1;
  std::int64_t train_iters = -1;
  double timestamp_s = kUnknown;
  double time_s = kUnknown;
  double reported_flops_per_gpu = kUnknown;
  double consumed_samples = kUnknown;
  double consumed_tokens = kUnknown;
  double global_batch = kUnknown;
  double loss = kUnknown;
  double samples_per_s = kUnknown;
  double tokens_per_gpu_per_s = kUnknown;
  double actual_seq_len = kUnknown;
  std::uint32_t skipped = 0;
  const char* reporter = nullptr;  ///< which code printed the FLOP/s field
  bool bad_number = false;         ///< a field we rely on did not parse
  std::string_view bad_field;
};

/// The field layout of the previous iteration line. A log prints the same keys in the same
/// order on every iteration line, so a field whose text up to its first ": " is the one
/// remembered is the same field: one compare instead of searching for the key's end and
/// matching it against every key known.
struct MegatronLineMemo {
  struct Field {
    enum class Kind : std::uint8_t {
      kNone,
      kElapsedMs,
      kElapsedS,
      kThroughputTflops,
      kTokensPerGpuPerS,
      kDeepSpeedTflops,
      kNeoxFlops,
      kActualSeqLen,
      kConsumedSamples,
      kConsumedTokens,
      kGlobalBatch,
      kSamplesPerS,
      kSkipped,
    };
    std::string prefix;  ///< the field's text up to and including its first ": "; empty: none
    std::size_t key_begin = 0;  ///< the trimmed key within the prefix
    std::size_t key_size = 0;
    Kind kind = Kind::kNone;
    bool is_loss = false;
  };
  static constexpr std::size_t kMaxFields = 64;  ///< Megatron prints about 15
  std::vector<Field> fields;                     ///< by position on the line
};

/// True when `line` holds an iteration line; fills `out`. Lines that mention "iteration" in
/// other ways (args, checkpoints) return false. With a memo (kept by the caller from line to
/// line), fields laid out as on the previous line are read without searching; the result is the
/// same either way.
bool parse_megatron_iteration(std::string_view line, MegatronIterationLine& out,
                              MegatronLineMemo* memo = nullptr);

/// Applies one Megatron argument (`num_layers`, `--num-layers`, ...) to the run metadata.
/// Returns true when the name is one mfu uses.
bool apply_megatron_arg(std::string_view name, std::string_view value, std::uint64_t line,
                        RunBuilder& out, bool overwrite);

/// Reads `--key value` pairs from a launch command echoed into the log.
void apply_megatron_command_line(std::string_view line, std::uint64_t number, RunBuilder& out);

/// Builds an Iteration from a parsed line, converting cumulative counters with `prev`.
class MegatronRecordMaker {
 public:
  Iteration make(const MegatronIterationLine& l, std::uint64_t line_no);

 private:
  std::int64_t prev_iteration_ = -1;
  double prev_samples_ = kUnknown;
  double prev_tokens_ = kUnknown;
};

}  // namespace mfu::detail
