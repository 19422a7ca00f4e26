#!/bin/sh
# The whole test suite: a -Werror build with its unit, sample, CLI and corpus tests (in build/,
# with the default generator, like the README's main command, so the two can share it); the
# same suite under AddressSanitizer and UndefinedBehaviorSanitizer; and a short, bounded fuzz
# run of every fuzz target. Run from the repository root after tools/setup.sh.
set -eu
JOBS="${JOBS:-2}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMFU_WERROR=ON
cmake --build build -j "$JOBS"
ctest --test-dir build -j "$JOBS" --output-on-failure
if [ "${MFU_SKIP_SANITIZERS:-0}" != 1 ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMFU_WERROR=ON \
        -DMFU_SANITIZE=address,undefined -DMFU_BUILD_BENCH=OFF
  cmake --build build-asan -j "$JOBS"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan -j "$JOBS" --output-on-failure -E install_consumer
fi
if [ "${MFU_SKIP_FUZZ:-0}" != 1 ] && [ -x tests/fuzz/run.sh ]; then
  tests/fuzz/run.sh "${MFU_FUZZ_SECONDS:-10}"
fi
