#!/usr/bin/env bash
# The second code path for speed work: two mfu binaries (a base and a changed build) must give
# byte-identical analyses. Runs `mfu analyze --output json` (stdout, stderr and exit code) with
# and without inputs the logs may lack, over every excerpt in tests/data, every real sample in
# ../shared/samples*/ and any extra files or directories given (the large generated logs of
# compare.sh), and lists each input where the two differ.
#
#   tests/bench/same_results.sh BASE_MFU NEW_MFU [EXTRA_INPUT...]
#
# Exit 0 when every output is identical, 1 when any differs.
set -uo pipefail

BASE=${1:?usage: same_results.sh BASE_MFU NEW_MFU [EXTRA_INPUT...]}
NEW=${2:?usage: same_results.sh BASE_MFU NEW_MFU [EXTRA_INPUT...]}
shift 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

inputs=()
while IFS= read -r -d '' f; do inputs+=("$f"); done < <(
  find "$ROOT/tests/data" "$ROOT/../shared/samples" "$ROOT/../shared/samples-next" -type f \
    ! -name '*.md' ! -name '*.tsv' ! -name '*.csv' -print0 2>/dev/null | sort -z)
inputs+=("$@")

run() {  # binary tag input flags...
  local bin=$1 tag=$2 input=$3
  shift 3
  "$bin" analyze "$input" --output json "$@" >"$OUT/$tag.out" 2>"$OUT/$tag.err"
  echo $? >"$OUT/$tag.rc"
}

differ=0
checked=0
for input in "${inputs[@]}"; do
  for flags in "" "--gpu h100 --gpus 64 --model llama3-8b"; do
    # shellcheck disable=SC2086 # the flags are words
    run "$BASE" base "$input" $flags
    # shellcheck disable=SC2086
    run "$NEW" new "$input" $flags
    checked=$((checked + 1))
    for part in out err rc; do
      if ! cmp -s "$OUT/base.$part" "$OUT/new.$part"; then
        echo "differs ($part): $input ${flags:-(no flags)}"
        differ=$((differ + 1))
        break
      fi
    done
  done
done
echo "same_results: $checked analyses compared, $differ differ"
[[ $differ == 0 ]]
