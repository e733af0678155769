#!/usr/bin/env bash
# On the GPU machine, bench_grid, gpu_check and op-gpu-tests as scripts/devbin.sh builds them in
# DIR:
#   knob:  (binaries built with alone.patch: one-cluster plans whose blocks each get a
#          multiprocessor, its `Plan::alone`) CANDLE_RNN_PERSISTENT_ALONE=1 / 0 / 1 (fewer
#          blocks per cluster where the rule's size shares multiprocessors / the rule's size
#          always), graphed then eager, bf16
#          training | forward (µs an example) at KNOB_SHAPES (CELL:L,B,T,H ...), through API
#          (bench_grid's --api, direct unless set); then each shape's plans
#          (CANDLE_RNN_PERSISTENT_SHOW_PLANS) either way (OUT/knob.log, OUT/plans.txt).
#   sanitize: ../2026-11-30-h200-bias-parts/run.sh's, at SAN_SPECS (OUT/sanitize.log).
#   tests, check, grid: ../2026-11-30-h200-side-streams/run.sh's.
#   results/2026-11-30-h200-launch-marks/run.sh DIR OUT knob|sanitize|tests|check|grid
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
# One bench_grid row, "train forward; " (µs an example), with the settings VAR=VALUE given,
# graphed where `graph` is --graph (empty: eager), at CELL `c` and SHAPE `sh`.
row() {
  env "$@" timeout 120 "$D/bench_grid" --no-loop $graph --loss sum --input-grad --reps 10 --warmup 5 \
    --api "${API:-direct}" --mode $c --shape $sh --variants op-bf16-default \
    2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
    | awk -F'|' '{t=$8; f=$9; gsub(/ /,"",t); gsub(/ /,"",f); printf "%s %s; ", t, f}'
}
case $PART in
knob)
  shapes=${KNOB_SHAPES:-"lstm:1,128,30,128 gru:1,128,30,128 lstm:1,32,30,128 gru:1,32,30,128 lstm:1,32,30,512"}
  for graph in --graph ""; do
    for spec in $shapes; do
      c=${spec%%:*} sh=${spec#*:}
      alone() { row CANDLE_RNN_PERSISTENT_ALONE=$1; }
      echo "${graph:-eager} ${API:-direct} $c $sh | alone $(alone 1) | rule's $(alone 0) | alone $(alone 1)"
    done
  done 2>&1 | tee -a "$OUT/knob.log"
  graph=--graph
  for spec in $shapes; do
    c=${spec%%:*} sh=${spec#*:}
    for a in 1 0; do
      CANDLE_RNN_PERSISTENT_ALONE=$a CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 120 "$D/bench_grid" --no-loop \
        --graph --loss sum --input-grad --reps 1 --warmup 0 --mode $c --shape $sh --variants op-bf16-default 2>&1 \
        | grep "candle-cudnn-rnn:" | sed "s/^/ALONE=$a /"
    done
  done > "$OUT/plans.txt"
  ;;
sanitize) bash "$here/../2026-11-30-h200-bias-parts/run.sh" "$D" "$OUT" sanitize ;;
tests | check | grid) bash "$here/../2026-11-30-h200-side-streams/run.sh" "$D" "$OUT" "$PART" ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
