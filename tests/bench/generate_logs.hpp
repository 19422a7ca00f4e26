#pragma once
// Synthetic large logs for benchmarks (never committed): native JSON Lines, Megatron-LM text,
// Kineto traces, of about `bytes` bytes.
#include <cstdint>
#include <string>

namespace mfu_bench {

/// Writes a `kind` ("native", "native-flops", "megatron", "kineto") log of about `bytes` to `path`;
/// false on an unknown kind or an I/O error. `rank` goes into a Kineto trace's distributedInfo.
bool generate(const std::string& kind, std::uint64_t bytes, const std::string& path, int rank = 0);

}  // namespace mfu_bench
