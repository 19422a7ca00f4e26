#!/bin/sh
# Installs everything mfu needs to build, test and benchmark on Debian 12 (run as root).
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config \
  libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libsimdjson-dev zlib1g-dev libzstd-dev \
  libprotobuf-dev protobuf-compiler \
  libgtest-dev libgmock-dev libbenchmark-dev \
  clang libclang-rt-14-dev \
  python3 gzip zstd jq time chromium >/dev/null
