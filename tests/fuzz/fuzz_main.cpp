// The libFuzzer entry point of every target (see properties.hpp): the environment variable
// MFU_FUZZ_TARGET names the one to run (MFU_FUZZ_TARGET=list prints them). A violated property
// aborts, so libFuzzer saves the input.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "properties.hpp"

namespace {

std::string g_target;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* name = std::getenv("MFU_FUZZ_TARGET");
  const std::string wanted = name ? name : "";
  for (const auto& t : mfu::fuzz::targets()) {
    if (wanted == "list") std::printf("%s\n", t.name.c_str());
    if (t.name == wanted) g_target = wanted;
  }
  if (wanted == "list") std::exit(0);
  if (g_target.empty()) {
    std::fprintf(stderr,
                 "fuzz: set MFU_FUZZ_TARGET to a target (MFU_FUZZ_TARGET=list names them)\n");
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  try {
    mfu::fuzz::run_target(g_target, std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const mfu::fuzz::PropertyViolation& e) {
    std::fprintf(stderr, "property violated (%s): %s\n", g_target.c_str(), e.what());
    std::abort();
  }
  return 0;
}
