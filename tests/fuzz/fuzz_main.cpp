// One libFuzzer entry point, compiled once per target with MFU_FUZZ_TARGET naming what it
// checks (see properties.hpp). A violated property aborts, so libFuzzer saves the input.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "properties.hpp"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  try {
    mfu::fuzz::run_target(MFU_FUZZ_TARGET,
                          std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const mfu::fuzz::PropertyViolation& e) {
    std::fprintf(stderr, "property violated (%s): %s\n", MFU_FUZZ_TARGET, e.what());
    std::abort();
  }
  return 0;
}
