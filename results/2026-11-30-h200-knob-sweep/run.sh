#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh (or its bench_grid alone) in DIR:
#   sweep:  graphed bf16-default training | forward (µs an example, bench_grid --no-loop --graph
#           --loss sum --input-grad --reps 10 --warmup 5 --api direct) of each SWEEP entry,
#           CELL:L,B,T,H:SETTINGS (SETTINGS: VAR=VALUE joined by '+', the persistent kernels'
#           CANDLE_RNN_PERSISTENT_ tuning without that prefix), as default / setting / default,
#           after the plans the default takes (OUT/sweep.log).
#   results/2026-11-30-h200-knob-sweep/run.sh DIR OUT sweep
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
# One bench_grid row, "train forward" (µs an example), with the environment's VAR=VALUE that follow.
row() {
  env "$@" timeout 60 "$D/bench_grid" --no-loop --graph --loss sum --input-grad --reps 10 \
    --warmup 5 --api direct --mode $cell --shape $shape --variants op-bf16-default \
    2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
    | awk -F'|' '{t=$8; f=$9; gsub(/ /,"",t); gsub(/ /,"",f); printf "%s %s", t, f}'
}
case $PART in
sweep)
  shown=""
  for entry in $SWEEP; do
    IFS=: read -r cell shape settings <<< "$entry"
    if [[ " $shown " != *" $cell:$shape "* ]]; then
      shown="$shown $cell:$shape"
      CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 60 "$D/bench_grid" --no-loop --graph --loss sum \
        --input-grad --reps 2 --warmup 1 --api direct --mode $cell --shape $shape \
        --variants op-bf16-default 2>&1 >/dev/null | grep -o "Plan {.*" | sort -u \
        | sed "s/^/$cell $shape plan: /"
    fi
    vars=()
    for s in ${settings//+/ }; do vars+=("CANDLE_RNN_PERSISTENT_$s"); done
    echo "$cell $shape ${settings} | default $(row) | setting $(row "${vars[@]}") | default $(row)"
  done 2>&1 | tee -a "$OUT/sweep.log"
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
