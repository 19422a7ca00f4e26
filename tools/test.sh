#!/bin/sh
# The whole test suite: a -Werror build with its unit, sample, CLI and corpus tests (in build/,
# with the default generator, like the README's main command, so the two can share it); then one
# clang build (build-san) that serves both the sanitizers and fuzzing: the same suite under
# AddressSanitizer and UndefinedBehaviorSanitizer, and a short, bounded run of every libFuzzer
# target (two at a time, one a core). The two builds are most of the run: about 435 s (gcc) and
# 545 s (clang) on 2 cores, 2026-12-07, before the test code (both builds) and the whole
# sanitizer build were compiled in unity batches, about 320 and 288 s after (the command-line
# code is batched in both); a third build for fuzzing alone would add as much again.
# Run from the repository root after tools/setup.sh --with-tests.
set -eu
JOBS="${JOBS:-2}"
# Every test runs: one whose input is missing (../shared/samples or $MFU_SAMPLES_DIR; chromium,
# python3-torch, python3-distributed, groff or script(1), which tools/setup.sh --with-tests
# installs) fails and says which; none skips.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMFU_WERROR=ON -DMFU_BUILD_TESTS=ON -DMFU_BUILD_BENCH=ON
cmake --build build -j "$JOBS"
ctest --test-dir build -j "$JOBS" --output-on-failure
if [ "${MFU_SKIP_SANITIZERS:-0}" != 1 ]; then
  tests/fuzz/configure.sh build-san
  cmake --build build-san -j "$JOBS"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-san -j "$JOBS" --output-on-failure -E "install_consumer|TrainTiny|DaskFleet"
  if [ "${MFU_SKIP_FUZZ:-0}" != 1 ]; then
    JOBS="$JOBS" MFU_FUZZ_NO_BUILD=1 MFU_FUZZ_BUILD=build-san tests/fuzz/run.sh "${MFU_FUZZ_SECONDS:-3}"
  fi
fi
