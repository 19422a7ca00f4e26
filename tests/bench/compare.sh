#!/usr/bin/env bash
# Times `mfu analyze` against what users would otherwise run, on the same large files in one
# run: `wc -l` (the floor: reading the bytes), jq, and a hand-written Python loop.
#
#   tests/bench/compare.sh [SIZE_MB] [WORK_DIR]     (defaults: 1024 MB, /tmp/mfu-compare)
#
# Needs a build with the benchmarks (build/mfu, build/tests/bench/mfu_bench_gen; BUILD=dir to
# change), GNU time (/usr/bin/time), jq and python3. The generated files are never committed.
# The page cache is warmed before each timing, so every tool reads from memory: the ratios
# compare parsing, not disks.
set -euo pipefail

SIZE_MB=${1:-1024}
WORK=${2:-/tmp/mfu-compare}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
MFU=$BUILD/mfu
GEN=$BUILD/tests/bench/mfu_bench_gen
TIMEOUT=${TIMEOUT:-600}

for tool in "$MFU" "$GEN" /usr/bin/time; do
  [[ -x $tool ]] || { echo "compare.sh: $tool is missing (build with -DMFU_BUILD_BENCH=ON; apt-get install time)" >&2; exit 2; }
done
HAVE_JQ=1; command -v jq >/dev/null || HAVE_JQ=0
HAVE_PY=1; command -v python3 >/dev/null || HAVE_PY=0

mkdir -p "$WORK"
gen() {  # kind file [rank]
  if [[ ! -s $2 ]] || (( $(stat -c %s "$2") < SIZE_MB * 1024 * 1024 * 95 / 100 )); then
    echo "generating $2 ($SIZE_MB MB)..." >&2
    "$GEN" "$1" "$SIZE_MB" "$2" "${3:-0}"
  fi
}
NATIVE=$WORK/native.jsonl
NATIVE_FLOPS=$WORK/native_flops_182mb.jsonl
MEGATRON=$WORK/megatron.log
KINETO_DIR=$WORK/kineto
mkdir -p "$KINETO_DIR"
gen native "$NATIVE"
# The external generator's shape (model_flops and four phases a line), at its size: 182 MB.
SIZE_MB_SAVE=$SIZE_MB; SIZE_MB=182
gen native-flops "$NATIVE_FLOPS"
SIZE_MB=$SIZE_MB_SAVE
# The same with a restart at its end (its first 1,000 records again): one restart took a log
# off the fast path of combining streams (4.8x the time, 12x the memory, before 43b9c67).
NATIVE_RESTARTED=$WORK/native_flops_182mb_restarted.jsonl
if [[ ! -s $NATIVE_RESTARTED || $NATIVE_RESTARTED -ot $NATIVE_FLOPS ]]; then
  { cat "$NATIVE_FLOPS"; sed -n '2,1001p' "$NATIVE_FLOPS"; } >"$NATIVE_RESTARTED"
fi
# The same lines printed by two ranks, one after the other (a "rank" field on each): several
# ranks in one file were combined from a copy of every record (3x the time, 4x the memory of
# one rank's lines, before 0ca6213).
NATIVE_TWO_RANKS=$WORK/native_flops_182mb_two_ranks.jsonl
if [[ ! -s $NATIVE_TWO_RANKS || $NATIVE_TWO_RANKS -ot $NATIVE_FLOPS ]]; then
  awk '/^\{"step"/ { sub(/^\{/, ""); print "{\"rank\":0," $0; print "{\"rank\":1," $0; next } { print }' \
    "$NATIVE_FLOPS" >"$NATIVE_TWO_RANKS"
fi
gen megatron "$MEGATRON"
# Two ranks of half the size each: the trace target is stated per pair of ranks.
SIZE_MB_SAVE=$SIZE_MB; SIZE_MB=$((SIZE_MB_SAVE / 2))
gen kineto "$KINETO_DIR/rank0.pt.trace.json" 0
gen kineto "$KINETO_DIR/rank1.pt.trace.json" 1
SIZE_MB=$SIZE_MB_SAVE

# Python loops a user writes by hand.
PY_JSONL='import json,sys
t=0.0
for line in open(sys.argv[1]):
    d=json.loads(line)
    t+=d.get("time_s",0) or 0
print(t)'
PY_MEGATRON='import re,sys
r=re.compile(r"elapsed time per iteration \(ms\): ([0-9.]+)")
t=0.0
for line in open(sys.argv[1]):
    m=r.search(line)
    if m: t+=float(m.group(1))
print(t)'
PY_KINETO='import json,sys
t=0
for f in sys.argv[1:]:
    d=json.load(open(f))
    t+=sum(e.get("dur",0) for e in d["traceEvents"] if e.get("cat")=="kernel")
print(t)'

ROWS=()
TIMES=$WORK/time.out
run_timed() {  # label bytes command... (the inputs must already be in the page cache)
  local label=$1 bytes=$2; shift 2
  rm -f "$TIMES"
  timeout "$TIMEOUT" /usr/bin/time -o "$TIMES" -f "%e %M" "$@" >/dev/null 2>&1 || true
  local secs=nan kb=0
  if [[ -s $TIMES ]]; then
    read -r secs kb < <(tail -1 "$TIMES")
    [[ $secs =~ ^[0-9.]+$ ]] || { secs=nan; kb=0; }
  fi
  ROWS+=("$label|$bytes|$secs|$kb")
}
measure() {  # label bytes command... (the last argument is the input file)
  cat "${@: -1}" >/dev/null
  run_timed "$@"
}
measure_dir() {  # label bytes dir command...
  local label=$1 bytes=$2 dir=$3; shift 3
  cat "$dir"/* >/dev/null
  run_timed "$label" "$bytes" "$@"
}

B_NATIVE=$(stat -c %s "$NATIVE")
B_NATIVE_FLOPS=$(stat -c %s "$NATIVE_FLOPS")
B_NATIVE_RESTARTED=$(stat -c %s "$NATIVE_RESTARTED")
B_NATIVE_TWO_RANKS=$(stat -c %s "$NATIVE_TWO_RANKS")
B_MEGATRON=$(stat -c %s "$MEGATRON")
B_KINETO=$(( $(stat -c %s "$KINETO_DIR/rank0.pt.trace.json") + $(stat -c %s "$KINETO_DIR/rank1.pt.trace.json") ))

measure "native: wc -l" "$B_NATIVE" wc -l "$NATIVE"
measure "native: mfu analyze" "$B_NATIVE" "$MFU" analyze "$NATIVE"
(( HAVE_JQ )) && measure "native: jq -r .time_s" "$B_NATIVE" jq -r .time_s "$NATIVE"
(( HAVE_PY )) && measure "native: python json.loads loop" "$B_NATIVE" python3 -c "$PY_JSONL" "$NATIVE"

measure "native 182 MB: wc -l" "$B_NATIVE_FLOPS" wc -l "$NATIVE_FLOPS"
measure "native 182 MB: mfu analyze" "$B_NATIVE_FLOPS" "$MFU" analyze "$NATIVE_FLOPS"
(( HAVE_PY )) && measure "native 182 MB: python json.loads loop" "$B_NATIVE_FLOPS" python3 -c "$PY_JSONL" "$NATIVE_FLOPS"
measure "native 182 MB+restart: mfu analyze" "$B_NATIVE_RESTARTED" "$MFU" analyze "$NATIVE_RESTARTED"
measure "native 182 MB x2 ranks: wc -l" "$B_NATIVE_TWO_RANKS" wc -l "$NATIVE_TWO_RANKS"
measure "native 182 MB x2 ranks: mfu analyze" "$B_NATIVE_TWO_RANKS" "$MFU" analyze "$NATIVE_TWO_RANKS"

measure "megatron: wc -l" "$B_MEGATRON" wc -l "$MEGATRON"
measure "megatron: mfu analyze" "$B_MEGATRON" "$MFU" analyze --gpu h100 --gpus 64 --model llama3-8b "$MEGATRON"
(( HAVE_PY )) && measure "megatron: python regex loop" "$B_MEGATRON" python3 -c "$PY_MEGATRON" "$MEGATRON"

measure_dir "kineto x2: wc -l" "$B_KINETO" "$KINETO_DIR" wc -l "$KINETO_DIR/rank0.pt.trace.json" "$KINETO_DIR/rank1.pt.trace.json"
measure_dir "kineto x2: mfu analyze" "$B_KINETO" "$KINETO_DIR" "$MFU" analyze "$KINETO_DIR"
(( HAVE_JQ )) && measure_dir "kineto x2: jq kernel durations" "$B_KINETO" "$KINETO_DIR" \
  jq '[.traceEvents[] | select(.cat=="kernel") | .dur] | add' "$KINETO_DIR/rank0.pt.trace.json" "$KINETO_DIR/rank1.pt.trace.json"
(( HAVE_PY )) && measure_dir "kineto x2: python json.load" "$B_KINETO" "$KINETO_DIR" python3 -c "$PY_KINETO" \
  "$KINETO_DIR/rank0.pt.trace.json" "$KINETO_DIR/rank1.pt.trace.json"

echo
echo "mfu compare: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
printf '%-36s %10s %9s %10s %12s %12s %10s\n' "run" "size MB" "seconds" "MB/s" "x wc -l" "peak MB" "RSS/size"
wc_secs=""
for row in "${ROWS[@]}"; do
  IFS='|' read -r label bytes secs kb <<<"$row"
  [[ $label == *"wc -l" ]] && wc_secs=$secs
  awk -v l="$label" -v b="$bytes" -v s="$secs" -v k="$kb" -v w="$wc_secs" 'BEGIN {
    mb = b / 1048576; rss = k / 1024
    if (s == "nan") { printf "%-36s %10.0f %9s %10s %12s %12s %10s\n", l, mb, "timeout", "-", "-", "-", "-"; exit }
    ss = (s > 0 ? s : 0.005)
    ratio = (w != "" && w > 0) ? sprintf("%.1fx", s / w) : "-"
    printf "%-36s %10.0f %9.2f %10.0f %12s %12.0f %9.1f%%\n", l, mb, s, mb / ss, ratio, rss, 100 * rss / mb
  }'
done

# The record store's bytes per record (mfu inspect: what the columns hold once read).
echo
printf '%-36s %12s %14s\n' "record store" "records" "bytes/record"
for f in "$NATIVE" "$NATIVE_FLOPS" "$MEGATRON"; do
  "$MFU" inspect "$f" --output json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
n = d["records"]
print("%-36s %12d %14.1f" % (sys.argv[1], n, d["record_store_bytes"] / n if n else 0))' "$(basename "$f")" ||
    echo "$(basename "$f"): mfu inspect failed"
done
