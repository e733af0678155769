#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh (or its bench_grid, gpu_check and
# op-gpu-tests alone) in DIR:
#   ab:     the layer's weight-gradient GEMMs on side streams (DIR) against one stream (OLD: a
#           folder of the older build's binaries), DIR / OLD / DIR: training | forward (µs an
#           example), bench_grid --loss sum --input-grad, graphed then eager, at AB_SHAPES
#           (CELL:L,B,T,H ...), variants AB_VARIANTS (op-bf16-default unless set), through API
#           (bench_grid's --api, direct unless set; OUT/ab.log).
#   knob:   the same as `ab` within DIR's build: CANDLE_RNN_PERSISTENT_SIDE_STREAMS=1 / 0 / 1
#           (side streams always / never / always) at KNOB_SHAPES, variants AB_VARIANTS
#           (OUT/knob.log).
#   progress: (binaries built with progress-chunks.patch, not on main) a layer's weight and
#           input gradients' products made chunk by chunk while its backward recurrence goes
#           on, CANDLE_RNN_PERSISTENT_PROGRESS=PROGRESS_STEPS (10 unless set) / 0 (none) /
#           PROGRESS_STEPS, graphed, at PROGRESS_SHAPES (OUT/progress.log); then (unless
#           PROGRESS_SANITIZE is set empty) compute-sanitizer memcheck, racecheck and synccheck
#           over LSTM and GRU training at [6, 16, 128] in chunks of 2 steps
#           (OUT/sanitize-progress.log, the tools' logs in OUT/sanitize-progress.tgz). Its
#           correctness: `tests` and `check` with CANDLE_RNN_PERSISTENT_PROGRESS set.
#   tests:  the op's GPU tests whose names hold FILTER (all unless set; OUT/tests.log).
#   check:  gpu_check --persistent --mode MODE (lstm unless set) under CHECK_TIMEOUT seconds
#           (400 unless set; OUT/gpu_check-MODE.log): ../2026-11-30-h200-phases/run.sh's part.
#   grid:   scripts/compare-grid.sh in half precision (on-gpu.sh's half_grid: OUT/grid.log,
#           OUT/table.md, OUT/grid.tgz); with GRID=tf32, TF32 against PyTorch's TF32 module.
#   results/2026-11-30-h200-side-streams/run.sh DIR OUT ab|knob|progress|tests|check|grid
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
# One bench_grid row, "train forward; " per variant (µs an example): BENCH ($1, a bench_grid)
# with the environment's settings VAR=VALUE that follow, graphed where `graph` is --graph
# (empty: eager), at CELL `c` and SHAPE `sh`, variants AB_VARIANTS, through API.
row() {
  local bench=$1; shift
  env "$@" timeout 120 "$bench" --no-loop $graph --loss sum --input-grad --reps 10 --warmup 5 \
    --api "${API:-direct}" --mode $c --shape $sh --variants "${AB_VARIANTS:-op-bf16-default}" \
    2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
    | awk -F'|' '{t=$8; f=$9; gsub(/ /,"",t); gsub(/ /,"",f); printf "%s %s; ", t, f}'
}
case $PART in
ab)
  [ -x "$OLD/bench_grid" ] || xz -dkf "$OLD/bench_grid.xz"
  shapes=${AB_SHAPES:-"lstm:1,128,30,128 gru:1,128,30,128 lstm:1,32,30,128 gru:1,32,30,128 lstm:1,32,30,512 gru:1,128,30,512 lstm:1,32,30,1024 lstm:3,128,30,512"}
  for graph in --graph ""; do
    for spec in $shapes; do
      c=${spec%%:*} sh=${spec#*:}
      echo "${graph:-eager} $c $sh | new $(row "$D/bench_grid") | old $(row "$OLD/bench_grid") | new $(row "$D/bench_grid")"
    done
  done 2>&1 | tee -a "$OUT/ab.log"
  ;;
knob)
  shapes=${KNOB_SHAPES:-"lstm:1,32,30,64 gru:1,128,30,64 lstm:1,32,30,256 gru:1,32,30,256 lstm:1,128,30,256 gru:1,128,30,256 lstm:1,128,30,128 gru:1,32,30,128"}
  for graph in ${KNOB_PASSES:---graph eager}; do
    [ "$graph" = eager ] && graph=""
    for spec in $shapes; do
      c=${spec%%:*} sh=${spec#*:}
      side() { row "$D/bench_grid" CANDLE_RNN_PERSISTENT_SIDE_STREAMS=$1; }
      echo "${graph:-eager} ${API:-direct} $c $sh | side $(side 1) | one $(side 0) | side $(side 1)"
    done
  done 2>&1 | tee -a "$OUT/knob.log"
  ;;
progress)
  # (binaries built with progress-chunks.patch applied to 2c347fd)
  graph=--graph
  steps=${PROGRESS_STEPS:-10}
  shapes=${PROGRESS_SHAPES:-"lstm:1,32,30,512 gru:1,32,30,512 lstm:1,32,30,128 gru:1,32,30,128 lstm:1,128,30,128 lstm:1,32,30,1024"}
  for spec in $shapes; do
    c=${spec%%:*} sh=${spec#*:}
    counted() { row "$D/bench_grid" CANDLE_RNN_PERSISTENT_PROGRESS=$1; }
    echo "$c $sh | chunks of $steps $(counted $steps) | none $(counted 0) | chunks $(counted $steps)"
  done 2>&1 | tee -a "$OUT/progress.log"
  [ -n "${PROGRESS_SANITIZE-1}" ] || exit 0
  for c in lstm gru; do
    for tool in memcheck racecheck synccheck; do
      log="$OUT/cs-$tool-$c-1x16x6x128.log"
      CANDLE_RNN_PERSISTENT_PROGRESS=2 timeout 120 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" \
        --no-loop --loss sum --input-grad --api direct --reps 1 --warmup 0 --phase train --mode $c \
        --shape 1,16,6,128 --variants op-bf16-persistent > "$log" 2>&1
      echo "$tool $c 1,16,6,128 chunks of 2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//')"
    done
  done 2>&1 | tee "$OUT/sanitize-progress.log"
  (cd "$OUT" && tar czf sanitize-progress.tgz cs-*.log && rm -f cs-*.log)
  ;;
tests)
  stamp "GPU tests ${FILTER:-}"; gpu_tests ${FILTER:-}
  ;;
check)
  # ../2026-11-30-h200-phases/run.sh's part, its log named by the mode.
  bash "$here/../2026-11-30-h200-phases/run.sh" "$D" "$OUT" check
  mv "$OUT/gpu_check.log" "$OUT/gpu_check-${MODE:-lstm}.log"
  ;;
grid)
  stamp "grid ${GRID:-half}"
  case ${GRID:-half} in
    half) half_grid ;;
    tf32) compare_grid torch-tf32 op-tf32-default 560 ;;
  esac
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
