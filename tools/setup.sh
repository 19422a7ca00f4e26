#!/bin/sh
# Installs what mfu needs to build on Debian 12 (run as root). With --with-tests, also what the
# test suite, the sanitizer and fuzzing build and the benchmarks need (GoogleTest, Google
# Benchmark, clang, Chromium for the HTML report's browser test, Python's PyTorch for a real
# training loop, Dask for the distributed fleet example, and the tools the tests call).
set -eu
export DEBIAN_FRONTEND=noninteractive
build="build-essential cmake ninja-build pkg-config \
  libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libsimdjson-dev zlib1g-dev libisal-dev libzstd-dev \
  libprotobuf-dev protobuf-compiler"
tests=""
if [ "${1:-}" = "--with-tests" ]; then
  tests="libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev \
    python3 python3-torch python3-distributed gzip zstd jq time chromium groff-base bsdutils"
elif [ -n "${1:-}" ]; then
  echo "usage: tools/setup.sh [--with-tests]" >&2
  exit 2
fi
apt-get update -qq
# shellcheck disable=SC2086 # the lists are word lists
apt-get install -y -qq --no-install-recommends $build $tests >/dev/null
