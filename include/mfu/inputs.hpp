#pragma once
/// The inputs a user gives mfu besides the log, named in the library's messages without
/// knowing how they are given: the library says which input is missing ("give the GPU
/// count"), and each front end phrases it its own way (the CLI installs a phrasing that says
/// "--gpus"). Install a phrasing once, before any analysis runs.
///
/// **Example**:
///   mfu::set_input_phrasing([](mfu::Input i) { return std::string("--") + mfu::input_key(i); });
///   mfu::input_phrase(mfu::Input::kGpus);  // "--gpus"

#include <cstdint>
#include <string>

namespace mfu {

enum class Input : std::uint8_t {
  kGpus,              ///< the job's GPU count
  kGpu,               ///< the accelerator
  kPeak,              ///< dense peak FLOP/s per GPU
  kDtype,             ///< the dtype whose peak applies
  kModel,             ///< a model preset or config.json
  kShape,             ///< the model's layers, hidden size and heads
  kParams,            ///< the parameter count
  kSeqLen,            ///< the training sequence length
  kTokensPerStep,     ///< global tokens per step
  kBatch,             ///< global sequences per step
  kFlopsPerStep,      ///< model FLOPs per step, all GPUs
  kMicroBatches,      ///< pipeline micro-batches per step
  kConvention,        ///< the FLOP-counting convention
  kRecompute,         ///< activation recomputation
  kForceMerge,        ///< permission to merge inputs that look like different jobs
  kStepTime,          ///< time per training step
  kTokensPerSec,      ///< global tokens per second
  kMfu,               ///< a model FLOPs utilization
  kTrainTokens,       ///< tokens of the whole training
  kPricePerGpuHour,   ///< price of one GPU-hour
  kLayers,            ///< transformer layers
  kHidden,            ///< the model width
  kHeads,             ///< attention heads
  kVocab,             ///< vocabulary size
  kGpuDb,             ///< a file of extra accelerators
  kFormat,            ///< the log format, forced
  kStrict,            ///< refusing malformed lines
  kPattern,           ///< a regular expression with named groups
  kCommKernel,        ///< kernel names that are communication
  kFollow,            ///< watching a log as it grows
  kOutputFormat,      ///< text, json, markdown, csv or html
  kToGpu,             ///< a what-if: another accelerator
  kToGpus,            ///< a what-if: another GPU count
  kToPeak,            ///< a what-if: another dense peak per GPU
  kOverlap,           ///< a what-if: more communication overlap
  kTp,                ///< estimate layout
  kPp,                ///< estimate layout
  kCp,                ///< estimate layout
  kVpp,               ///< estimate layout
  kMicroBatch,        ///< sequences per micro-batch
  kKernelEfficiency,  ///< estimate: share of the peak the kernels reach
  kGradCompression,   ///< estimate: gradient compression
  kCheckpointTime,    ///< estimate: time to write one checkpoint
  kMtbf,              ///< estimate: failures of the whole job
};

/// A stable key: "gpus", "seq-len", "tokens-per-step", ...
[[nodiscard]] const char* input_key(Input i);
/// How the installed phrasing names the input; by default in words ("the GPU count").
[[nodiscard]] std::string input_phrase(Input i);

using InputPhrasing = std::string (*)(Input);
/// Installs how inputs are named in messages (nullptr: back to words).
void set_input_phrasing(InputPhrasing phrasing);

}  // namespace mfu
