#!/bin/sh
# A fleet report with a Slurm array job: one task per job log writes that job's summary, and a
# last job that depends on the array merges them. Summaries add up exactly, so the tasks can
# finish in any order.
#
#   ls runs/*.log > jobs.txt
#   sbatch --array=1-$(wc -l < jobs.txt) examples/fleet/slurm_array.sh jobs.txt summaries/
#   sbatch --dependency=afterany:<array job id> --wrap \
#     'cat summaries/*.jsonl | mfu merge > fleet.jsonl && mfu merge fleet.jsonl --output text'
#
#SBATCH --job-name=mfu-summary
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --time=00:10:00
set -eu
list="$1"
out="$2"
mkdir -p "$out"
log=$(sed -n "${SLURM_ARRAY_TASK_ID}p" "$list")
# A job that cannot be analysed leaves its reason next to the summaries instead of a line.
if ! mfu -q analyze "$log" --output summary > "$out/$SLURM_ARRAY_TASK_ID.jsonl" \
    2> "$out/$SLURM_ARRAY_TASK_ID.err"; then
  rm -f "$out/$SLURM_ARRAY_TASK_ID.jsonl"
fi
