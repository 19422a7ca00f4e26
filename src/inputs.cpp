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

constexpr std::array<Name, 15> kNames{{
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
}};

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
