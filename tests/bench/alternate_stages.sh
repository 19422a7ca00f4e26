#!/usr/bin/env bash
# Times the per-stage Google Benchmark cases of two mfu_bench binaries (a base and a changed
# build) against each other, taking turns: on a shared VM a stage's time moves by up to 2x
# between minutes, so only runs that alternate compare code. Each round runs both binaries on
# the cases matching FILTER, swapping which goes first every round; the table gives each case's
# median and minimum per binary, in the benchmark's own unit.
#
#   tests/bench/alternate_stages.sh BASE_BENCH NEW_BENCH [ROUNDS] [FILTER]
#     (defaults: 5 rounds; the ingest, finalize, analyze, analysis stage, line and store cases)
#
# PIN=CPU runs both on that one core (taskset): a pass over the records then runs on one thread,
# and the spread between runs was a few percent instead of up to 2x (2026-12-07).
set -euo pipefail

BASE=${1:?usage: alternate_stages.sh BASE_BENCH NEW_BENCH [ROUNDS] [FILTER]}
NEW=${2:?usage: alternate_stages.sh BASE_BENCH NEW_BENCH [ROUNDS] [FILTER]}
ROUNDS=${3:-5}
FILTER=${4:-'BM_(Ingest(Native|Megatron|Kineto)|FinalizeOnly|AnalyzeOnly|Stage|NativeLines|MegatronLines|StoreWrite)'}
PIN_CMD=()
[[ -n ${PIN:-} ]] && PIN_CMD=(taskset -c "$PIN")
for bin in "$BASE" "$NEW"; do
  [[ -x $bin ]] || { echo "alternate_stages.sh: $bin is not an executable" >&2; exit 2; }
done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

for ((round = 1; round <= ROUNDS; ++round)); do
  order="base new"
  ((round % 2 == 0)) && order="new base"
  for which in $order; do
    bin=$BASE
    [[ $which == new ]] && bin=$NEW
    # CSV rows: "name",iterations,real_time,cpu_time,time_unit,...
    "${PIN_CMD[@]}" "$bin" --benchmark_filter="$FILTER" --benchmark_min_time=0.3 --benchmark_format=csv \
      2>/dev/null | awk -F, -v w="$which" '/^"BM_/ {gsub(/"/, "", $1); print $1, w, $3, $5}' \
      >>"$OUT/times" || echo "alternate_stages.sh: $bin failed" >&2
  done
done

printf '%-40s %-5s %12s %12s %s\n' case run median min unit
sort -k1,1 -k2,2 -k3,3g "$OUT/times" | awk '
  function flush() {
    if (n > 0) printf "%-40s %-5s %12.4g %12.4g %s\n", key, run, v[int((n + 1) / 2)], v[1], unit
    n = 0
  }
  { if ($1 != key || $2 != run) { flush(); key = $1; run = $2 } v[++n] = $3; unit = $4 }
  END { flush() }'
