// mfu_bench_gen native|native-flops|megatron|kineto SIZE_MB OUT_FILE [RANK]: a large synthetic log.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "generate_logs.hpp"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s native|native-flops|megatron|kineto SIZE_MB OUT_FILE [RANK]\n",
                 argv[0]);
    return 2;
  }
  const double mb = std::strtod(argv[2], nullptr);
  if (!(mb > 0)) {
    std::fprintf(stderr, "SIZE_MB must be positive\n");
    return 2;
  }
  const auto bytes = static_cast<std::uint64_t>(mb * 1024 * 1024);
  if (!mfu_bench::generate(argv[1], bytes, argv[3], argc > 4 ? std::atoi(argv[4]) : 0)) {
    std::fprintf(stderr, "cannot write a '%s' log to %s\n", argv[1], argv[3]);
    return 2;
  }
  return 0;
}
