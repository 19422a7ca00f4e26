// The bucket table (key, label, advice, colour): the one place renderers, whatif and the gate
// read a bucket's name and what to do about it.
#include <array>

#include "mfu/analysis.hpp"
#include "mfu/error.hpp"

namespace mfu {
namespace {

constexpr std::array<BucketInfo, kBucketCount> kTable{{
    {BucketId::kCompute, "compute", "compute at peak", "", "#2e9e44"},
    {BucketId::kInefficiency, "compute_inefficiency", "compute below peak",
     "kernels run below peak: fused and FlashAttention kernels, larger micro-batches, FP8 where "
     "accuracy allows",
     "#e0b000"},
    {BucketId::kComm, "comm", "exposed communication",
     "overlap gradient reduction and parameter gathers with compute (DDP/FSDP bucketing, "
     "Megatron --overlap-grad-reduce --overlap-param-gather), keep tensor parallelism inside a "
     "node, check NCCL bus bandwidth",
     "#a040c0"},
    {BucketId::kIo, "io", "data / I/O wait",
     "more data-loader workers, prefetching and pinned memory, or faster storage", "#20a0c0"},
    {BucketId::kIdle, "idle", "idle, stalls and pipeline bubble",
     "find the slow steps (GC, logging, host syncs) and shrink the pipeline bubble with more "
     "micro-batches or an interleaved schedule",
     "#d04040"},
    {BucketId::kCheckpoint, "checkpoint", "checkpointing",
     "save asynchronously, or less often (mfu whatif gives the Young/Daly interval)", "#4060d0"},
    {BucketId::kRestart, "restart", "restarts and recovery",
     "checkpoint more often and fix the cause of the failures; recovery time is GPU time",
     "#802020"},
    {BucketId::kStartup, "startup", "startup and warm-up",
     "cache compilation and data indices; start from a warm image", "#808080"},
    {BucketId::kEval, "eval", "evaluation", "evaluate less often or on fewer batches", "#60a0ff"},
    {BucketId::kGeneration, "generation", "RL rollout (generation, scoring)",
     "RL steps that are not training FLOPs: overlap rollout with training (asynchronous or "
     "off-policy RL), tune the inference engine (batch size, KV cache, tensor parallelism), "
     "shorten responses or sample fewer per prompt",
     "#c07020"},
    {BucketId::kOther, "other", "unattributed",
     "not a cause: time the phases in the log or take a PyTorch profiler trace of a few steps "
     "(mfu analyze names the options of the run's framework)",
     "#b0b0b0"},
}};

constexpr bool table_in_enum_order() {
  for (std::size_t i = 0; i < kTable.size(); ++i)
    if (static_cast<std::size_t>(kTable[i].id) != i) return false;
  return true;
}
static_assert(table_in_enum_order(), "the bucket table must list the buckets in enum order");

}  // namespace

const BucketInfo& bucket_info(BucketId id) {
  const auto i = static_cast<std::size_t>(id);
  if (i >= kTable.size()) throw InternalError("bucket id out of range");
  return kTable[i];
}

std::optional<BucketId> bucket_from_key(std::string_view key) {
  for (const auto& b : kTable)
    if (key == b.key) return b.id;
  return std::nullopt;
}

const char* to_string(BucketSource s) {
  switch (s) {
    case BucketSource::kMeasured: return "measured";
    case BucketSource::kInferred: return "inferred";
    case BucketSource::kResidual: return "residual";
    case BucketSource::kNone: return "none";
  }
  return "?";
}

const Bucket* Analysis::bucket(const std::string& name) const {
  for (const auto& b : buckets)
    if (b.name == name) return &b;
  return nullptr;
}

const Bucket* Analysis::bucket(BucketId id) const {
  return bucket(bucket_key(id));
}

}  // namespace mfu
