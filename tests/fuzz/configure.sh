#!/bin/sh
# Configures the clang build shared by the sanitizer test run and the fuzz targets:
# AddressSanitizer + UndefinedBehaviorSanitizer, warnings as errors, tests and libFuzzer
# targets on, -O1 with line tables (what libFuzzer recommends; fast to compile); the command-line
# code alone at -O0 (see CMakeLists.txt); every target in unity batches of 8 files, which took
# this build from 545 to 288 s on 2 cores (2026-12-07: ASan's code for the templates every file
# instantiates is generated once a batch). The gcc build keeps the library one file at a time,
# so each of its files is still compiled on its own, as users build them.
#
#   tests/fuzz/configure.sh BUILD_DIR
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cmake -S "$ROOT" -B "${1:?usage: configure.sh BUILD_DIR}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_UNITY_BUILD=ON "-DCMAKE_CXX_FLAGS=-O1 -gline-tables-only" -DMFU_WERROR=ON -DMFU_SANITIZE=address,undefined \
  -DMFU_BUILD_FUZZ=ON -DMFU_BUILD_BENCH=OFF -DMFU_CLI_OPTIMIZE=-O0
