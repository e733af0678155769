#!/usr/bin/env bash
# On the GPU, from the repository root, with D=.devbin-c: each kernel's device time alone (ncu,
# which runs the kernels one at a time: no side-stream overlap) in eager f16 training calls at
# [200, 32, 512], LSTM and GRU, the backward pushed (CANDLE_RNN_PERSISTENT_PUSH=1,1, its tile in
# registers) and through L2 (the rule's), into OUT/ncu-CELL-PUSH.csv; prints the persistent
# kernels' times.
#   D=.devbin-c OUT=... results/2026-12-02-h200-push16-wreg/ncu-512.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
for cell in lstm gru; do
  for push in 1,1 1,0; do
    csv="$OUT/ncu-$cell-${push/,/}.csv"
    CANDLE_RNN_PERSISTENT_PUSH=$push timeout 100 "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv \
      "$D/bench_grid" --no-loop --loss sum --input-grad --api direct --mode $cell --shape 1,32,200,512 \
      --variants op-f16-default --phase train --warmup 1 --reps 2 > "$csv" 2> "$OUT/ncu-$cell.log"
    echo "== $cell push $push rc=$?"
    grep -E '"persistent_(fwd|bwd)' "$csv" | awk -F'","' '{print $5, $NF}' | tr -d '"' | head -8
    awk -F'","' '/gpu__time_duration/ {v=$NF; gsub(/[",]/,"",v); s+=v} END {print "all kernels, ns (3 calls):", s}' "$csv"
  done
done
