#!/bin/sh
# Builds the libFuzzer targets with clang (AddressSanitizer + UBSan, in build-san, configured by
# tests/fuzz/configure.sh and shared with the sanitizer test run) and runs each for SECONDS
# (default 60), seeded with ../shared/samples, tests/data, examples and the regression corpus.
# Prints executions per second per target; exits 1 when a target finds a crash or a violated
# property (the input is saved as tests/fuzz/findings/crash-TARGET-*: add it to
# tests/fuzz/regressions/TARGET/ once fixed, and the normal tests replay it).
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]      (MFU_FUZZ_NO_BUILD=1: use the existing build;
#                                                  JOBS=N: N targets at a time, default 2)
set -eu
SECS="${1:-60}"
[ $# -gt 0 ] && shift
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD="${MFU_FUZZ_BUILD:-$ROOT/build-san}"
SAMPLES="$ROOT/../shared/samples"
OUT="$ROOT/tests/fuzz/findings"
WORK="${TMPDIR:-/tmp}/mfu-fuzz-corpus"
# Inputs (seeds included) are cut to this many bytes: long enough for every format's header and
# dozens of steps, short enough that a seed runs in milliseconds under ASan.
MAX_LEN="${MFU_FUZZ_MAX_LEN:-32768}"
mkdir -p "$OUT" "$WORK"
if [ "${MFU_FUZZ_NO_BUILD:-0}" != 1 ]; then
  "$ROOT/tests/fuzz/configure.sh" "$BUILD" >/dev/null
  if ! cmake --build "$BUILD" -j "${JOBS:-2}" >"$WORK/build.log" 2>&1; then
    tail -40 "$WORK/build.log"
    echo "fuzz: the fuzz targets do not build (log: $WORK/build.log)" >&2
    exit 2
  fi
fi

# Every target of the one fuzzing binary (the list lives in tests/fuzz/properties.cpp).
FUZZ="$BUILD/tests/fuzz/fuzz_mfu"
[ -x "$FUZZ" ] || { echo "fuzz: no fuzzing binary at $FUZZ" >&2; exit 2; }
ALL=$(MFU_FUZZ_TARGET=list "$FUZZ" | sort)
[ -n "$ALL" ] || { echo "fuzz: $FUZZ lists no targets" >&2; exit 2; }
TARGETS="${*:-$ALL}"

seeds() {  # target -> seed files, one per line
  d="$ROOT/tests/data"
  case "$1" in
    ingest_detect) find "$d" "$ROOT/examples" "$SAMPLES" -type f 2>/dev/null ;;
    ingest_native) ls "$ROOT"/examples/*.jsonl ;;
    ingest_native_csv) ls "$d"/lightning_metrics.csv ;;
    ingest_megatron) ls "$d"/megatron_*.log "$ROOT"/examples/*.log; find "$SAMPLES/megatron" -type f 2>/dev/null ;;
    ingest_megatron_golden) ls "$d"/megatron_golden_excerpt.json ;;
    ingest_torchtitan) ls "$d"/torchtitan_*.log; find "$SAMPLES/torchtitan" -type f 2>/dev/null ;;
    ingest_hf_trainer|ingest_hf_trainer_state) ls "$d"/hf_* "$d"/msswift_* "$d"/whisper_*; find "$SAMPLES/hf_trainer" -type f 2>/dev/null ;;
    ingest_deepspeed) ls "$d"/deepspeed_* "$d"/dschat_*; find "$SAMPLES/deepspeed" "$SAMPLES/../samples-next/deepspeed" -type f 2>/dev/null ;;
    ingest_nanogpt) ls "$d"/nanogpt_* "$d"/modded_* "$d"/llama2c_*; find "$SAMPLES/nanogpt_llmc" -type f 2>/dev/null ;;
    ingest_nemo) ls "$d"/nemo*; find "$SAMPLES/../samples-next/nemo1" "$SAMPLES/../samples-next/nemo2" -type f 2>/dev/null ;;
    ingest_nanotron) ls "$d"/nanotron_* "$d"/prefix_slurm_pair_nanotron.log; find "$SAMPLES/../samples-next/nanotron" -type f 2>/dev/null ;;
    ingest_torchtune) ls "$d"/torchtune_*; find "$SAMPLES/../samples-next/torchtune" -type f 2>/dev/null ;;
    ingest_verl) ls "$d"/verl_* "$d"/dschat_*; find "$SAMPLES/../samples-next/verl" -type f 2>/dev/null ;;
    ingest_llamafactory) ls "$d"/llamafactory_*; find "$SAMPLES/../samples-next/llamafactory" -type f 2>/dev/null ;;
    ingest_fairseq) ls "$d"/fairseq_*; find "$SAMPLES/../samples-next/fairseq" -type f 2>/dev/null ;;
    ingest_composer) ls "$d"/composer_* ;;
    ingest_wandb_csv) ls "$d"/lightning_metrics.csv ;;
    ingest_olmo) find "$SAMPLES/../samples-next/olmo" -type f 2>/dev/null ;;
    ingest_tensorboard|ingest_wandb_history|ingest_wandb_summary) find "$SAMPLES/../samples-next/tensorboard" -type f 2>/dev/null ;;
    ingest_generic|ingest_pattern) ls "$d"/generic_* "$d"/pattern_* ;;
    ingest_mlperf|ingest_metadata) ls "$d"/mlperf_*; find "$SAMPLES/mlperf" -type f 2>/dev/null ;;
    ingest_maxtext) ls "$d"/maxtext_*; find "$SAMPLES/other" -type f 2>/dev/null ;;
    ingest_lightning_csv) ls "$d"/lightning_metrics.csv ;;
    ingest_kineto) find "$SAMPLES/kineto_trace" -type f 2>/dev/null ;;
    jobs) ls "$ROOT"/examples/jobs.csv ;;
    *) ;;
  esac
  [ -d "$ROOT/tests/fuzz/regressions/$1" ] && find "$ROOT/tests/fuzz/regressions/$1" -type f
  [ -d "$ROOT/tests/fuzz/seeds/$1" ] && find "$ROOT/tests/fuzz/seeds/$1" -type f
  return 0
}

run_one() {
  t="$1"
  corpus="$WORK/$t"
  mkdir -p "$corpus"
  seeds "$t" 2>/dev/null | grep -v PROVENANCE.md | while read -r f; do
    # Seeds are read as they are (gzip and zstd included: the reader decompresses them), cut to
    # their first MAX_LEN bytes: whole sample files under ASan made replaying the seeds, not
    # fuzzing, most of the time of a short run (167 s for ingest_detect at 4 s of fuzzing).
    [ -f "$f" ] && head -c "$MAX_LEN" "$f" >"$corpus/seed-$(basename "$f")" 2>/dev/null || true
  done
  log="$WORK/$t.log"
  if MFU_FUZZ_TARGET="$t" "$FUZZ" -max_total_time="$SECS" -timeout=20 -rss_limit_mb=2560 -max_len="$MAX_LEN" \
       -print_final_stats=1 -artifact_prefix="$OUT/crash-$t-" "$corpus" >"$log" 2>&1; then
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    rate=$(grep -o 'exec/s: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    echo "fuzz $t: ok, $execs runs in ${SECS} s ($rate exec/s)"
  else
    echo "fuzz $t: FOUND A PROBLEM (see $log and $OUT/crash-$t-*)"
    tail -30 "$log"
    return 1
  fi
}

# JOBS targets at a time (each still fuzzes for SECONDS on a core of its own), their reports
# printed in target order. One at a time left a core idle: the 34 targets of the test command
# took 150 s from fresh corpora on 2 cores, two at a time 79 s (2026-12-07).
AT_ONCE="${JOBS:-2}"
[ "$AT_ONCE" -ge 1 ] 2>/dev/null || AT_ONCE=1  # JOBS=0 or not a number: one at a time
status=0
set -- $TARGETS
while [ $# -gt 0 ]; do
  batch=""
  started=0
  while [ $# -gt 0 ] && [ "$started" -lt "$AT_ONCE" ]; do
    t="$1"
    shift
    batch="$batch $t"
    started=$((started + 1))
    (if run_one "$t" >"$WORK/$t.report" 2>&1; then echo 0; else echo 1; fi) >"$WORK/$t.rc" &
  done
  wait
  for t in $batch; do
    cat "$WORK/$t.report"
    [ "$(cat "$WORK/$t.rc")" = 0 ] || status=1
  done
done
exit $status
