#!/usr/bin/env bash
# Times two mfu binaries (a base and a changed build) against each other on compare.sh's large
# files, alternating them back to back. On a shared VM one binary's single runs can vary by 2x
# between minutes, more than most changes move: only runs that take turns on the same warm file
# compare code. Each round runs `wc -l` once, then both binaries, swapping which goes first
# every round. The table gives each one's median wall time and range over the rounds, with the
# user and sys time and peak memory of the run at that median.
#
#   tests/bench/alternate.sh BASE_MFU NEW_MFU [ROUNDS] [WORK_DIR]   (defaults: 7, /tmp/mfu-compare)
#
# Run tests/bench/compare.sh first: it generates the files in WORK_DIR.
set -euo pipefail

BASE=${1:?usage: alternate.sh BASE_MFU NEW_MFU [ROUNDS] [WORK_DIR]}
NEW=${2:?usage: alternate.sh BASE_MFU NEW_MFU [ROUNDS] [WORK_DIR]}
ROUNDS=${3:-7}
WORK=${4:-/tmp/mfu-compare}
[[ -x /usr/bin/time ]] || { echo "alternate.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
declare -A FILES=(
  [native]="$WORK/native.jsonl"
  [megatron]="$WORK/megatron.log"
  [kineto]="$WORK/kineto/rank0.pt.trace.json $WORK/kineto/rank1.pt.trace.json"
)
for input in native megatron kineto; do
  for f in ${FILES[$input]}; do
    [[ -s $f ]] || { echo "alternate.sh: $f is missing (run tests/bench/compare.sh first)" >&2; exit 2; }
  done
done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

for ((round = 1; round <= ROUNDS; ++round)); do
  for input in native megatron kineto; do
    # shellcheck disable=SC2086  # the Kineto entry is two files
    /usr/bin/time -f "%e" -a -o "$OUT/$input.wc" wc -l ${FILES[$input]} >/dev/null 2>&1
    order="base new"
    ((round % 2 == 0)) && order="new base"
    for which in $order; do
      bin=$BASE
      [[ $which == new ]] && bin=$NEW
      # shellcheck disable=SC2086
      /usr/bin/time -f "%e %U %S %M" -a -o "$OUT/$input.$which" "$bin" analyze ${FILES[$input]} \
        >/dev/null 2>&1 || echo "alternate.sh: $bin failed on $input" >&2
    done
  done
done

median() { sort -n "$1" | awk '{a[NR] = $0} END {print a[int((NR + 1) / 2)]}'; }
range() { sort -n "$1" | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "-" hi}'; }
printf '%-9s %-5s %8s %13s %8s %8s %9s\n' input run "wall s" "range" "user s" "sys s" "peak MB"
for input in native megatron kineto; do
  printf '%-9s %-5s %8s %13s\n' "$input" "wc" "$(median "$OUT/$input.wc")" "$(range "$OUT/$input.wc")"
  for which in base new; do
    read -r wall user sys kb < <(median "$OUT/$input.$which")
    printf '%-9s %-5s %8s %13s %8s %8s %9d\n' "$input" "$which" "$wall" \
      "$(range "$OUT/$input.$which")" "$user" "$sys" $((kb / 1024))
  done
done
