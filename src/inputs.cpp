// Names of the inputs a user gives, phrased by whoever drives the library (inputs.hpp).
#include "mfu/inputs.hpp"

#include <array>
#include <atomic>

namespace mfu {
namespace {

struct Name {
  const char* key;
  const char* words;
};

constexpr std::array<Name, 44> kNames{{
    {"gpus", "the GPU count"},
    {"gpu", "the accelerator"},
    {"peak", "the dense peak FLOP/s per GPU"},
    {"dtype", "the dtype"},
    {"model", "the model"},
    {"shape", "the model's layers, hidden size and heads"},
    {"params", "the parameter count"},
    {"seq-len", "the training sequence length"},
    {"tokens-per-step", "the tokens per step"},
    {"batch", "the global batch"},
    {"flops", "the model FLOPs per step"},
    {"micro-batches", "the pipeline micro-batches per step"},
    {"convention", "the FLOP convention"},
    {"recompute", "the activation recomputation"},
    {"force-merge", "permission to merge them anyway"},
    {"step-time", "the step time"},
    {"tokens-per-sec", "the token rate"},
    {"mfu", "the MFU given"},
    {"train-tokens", "the training tokens"},
    {"price-per-gpu-hour", "the price per GPU-hour"},
    {"layers", "the layer count"},
    {"hidden", "the hidden size"},
    {"heads", "the head count"},
    {"vocab", "the vocabulary size"},
    {"gpu-db", "the accelerator database file"},
    {"format", "the log format"},
    {"strict", "strict reading"},
    {"pattern", "the user's line pattern"},
    {"comm-kernel", "a communication-kernel name pattern"},
    {"follow", "following a growing log"},
    {"output", "the output format"},
    {"to-gpu", "the other accelerator"},
    {"to-gpus", "the other GPU count"},
    {"to-peak", "the other peak"},
    {"overlap", "the overlap share"},
    {"tp", "the tensor-parallel size"},
    {"pp", "the pipeline-parallel size"},
    {"cp", "the context-parallel size"},
    {"vpp", "the interleaved chunks per stage"},
    {"micro-batch", "the micro-batch size"},
    {"kernel-efficiency", "the kernel efficiency"},
    {"grad-compression", "the gradient compression ratio"},
    {"checkpoint-time", "the checkpoint time"},
    {"mtbf", "the mean time between failures"},
}};

static_assert(static_cast<std::size_t>(Input::kMtbf) + 1 == kNames.size(),
              "every Input has a name");

std::atomic<InputPhrasing> g_phrasing{nullptr};

}  // namespace

const char* input_key(Input i) {
  return kNames[static_cast<std::size_t>(i)].key;
}

std::string input_phrase(Input i) {
  if (InputPhrasing p = g_phrasing.load()) return p(i);
  return kNames[static_cast<std::size_t>(i)].words;
}

void set_input_phrasing(InputPhrasing phrasing) {
  g_phrasing.store(phrasing);
}

}  // namespace mfu
