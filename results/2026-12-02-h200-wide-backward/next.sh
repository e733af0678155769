#!/usr/bin/env bash
# Not run yet (written for the next session). On the GPU, from the repository root, with D (a
# scripts/devbin.sh build of a72c14e or later) and OUT set: what the wide backward's rule left
# open, graphed f16 training with dx, µs an example, each setting beside the default and again:
# - a GRU at hidden 512 in groups of 16 ([30 | 200, 128, 512], [30, 128, 3 x 512]), wide in chunks
#   of 32 gate columns (48 chunks, 3 a warp of 16: even, where 64's 24 chunks are not);
# - LSTM [30, 32, 1024], where the lab's launch took 0.93x wide and the op 1.01x: wide, wide in
#   chunks of 32, and the plans both take (SHOW_PLANS, OUT/plans-1024.txt).
#   D=... OUT=... results/2026-12-02-h200-wide-backward/next.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
graph=--graph v=op-f16-default
W=CANDLE_RNN_PERSISTENT_WIDE_BACKWARD
for spec in gru:1,128,30,512 gru:1,128,200,512 gru:3,128,30,512 lstm:1,32,30,1024 gru:1,32,30,512; do
  split_spec "$v:$spec"
  echo "$c $sh | default $(PHASE=train bench_with X=1)| wide $(PHASE=train bench_with $W=1)|" \
    "wide ch32 $(PHASE=train bench_with $W=1 CANDLE_RNN_PERSISTENT_CHUNK=32)|" \
    "not wide $(PHASE=train bench_with $W=0)| default $(PHASE=train bench_with X=1)"
done 2>&1 | tee "$OUT/next.txt"
for w in 0 1; do
  env CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 "$W=$w" timeout 60 "$D/bench_grid" --no-loop --loss sum --input-grad \
    --api direct --reps 1 --warmup 0 --phase train --mode lstm --shape 1,32,30,1024 --variants $v 2>&1 >/dev/null \
    | grep "train true" | head -3 | sed "s/^/wide $w: /"
done 2>&1 | tee "$OUT/plans-1024.txt"
