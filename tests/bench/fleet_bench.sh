#!/bin/sh
# mfu fleet over many small job logs: wall time and peak memory (a benchmark, never a timed
# test). Usage: tests/bench/fleet_bench.sh [MFU_BINARY] [JOBS]  (defaults: build/mfu, 10000)
set -eu
mfu="${1:-build/mfu}"
jobs="${2:-10000}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Each job: 50 steps of native JSON Lines on 8 GPUs, step time and communication varying by job.
awk -v n="$jobs" -v dir="$dir" 'BEGIN {
  for (k = 0; k < n; k++) {
    f = sprintf("%s/job%05d.jsonl", dir, k)
    print "{\"type\":\"meta\",\"gpus\":8,\"gpu\":\"h100-sxm\"}" > f
    for (i = 1; i <= 50; i++)
      printf "{\"step\":%d,\"time_s\":%.3f,\"model_flops\":1.5e15,\"comm_s\":%.3f}\n", i, 0.4 + (k % 7) * 0.05, 0.02 + (k % 3) * 0.01 > f
    close(f)
  }
}'
echo "jobs: $jobs, bytes: $(du -sb "$dir" | cut -f1)"
/usr/bin/time -f "wall %e s, peak RSS %M KiB" "$mfu" fleet "$dir" --output summary > /dev/null
