#!/usr/bin/env bash
# §3's next step (its run: ../2026-12-02-h200-wide-backward/ §6). On the GPU, from the repository root, with D=.devbin-c (or a
# later build): where the op's pushed backward at hidden 512 loses its time. Graphed f16
# training | forward, µs an example, at [30, 32, 512] and [200, 32, 512], LSTM and GRU: the
# rule's backward through L2, the pushed one, and each again with the weight-gradient GEMMs on
# the device's stream (SIDE_STREAMS=0) and with the tile from W_hh itself (TRANSPOSED=0); then
# the plans both take (SHOW_PLANS, stderr) beside the lab's build (HID 512, BATCH 8, UNITS 32,
# NBUF 8, CH 64, 4 groups).
#   D=.devbin-c OUT=... results/2026-12-02-h200-push16-wreg/next-512.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
graph=--graph v=op-f16-default
for spec in lstm:1,32,30,512 gru:1,32,30,512 lstm:1,32,200,512 gru:1,32,200,512; do
  split_spec "$v:$spec"
  echo "$c $sh | L2 $(bench_with X=1)| pushed $(bench_with CANDLE_RNN_PERSISTENT_PUSH=1,1)|" \
    "L2 no side $(bench_with CANDLE_RNN_PERSISTENT_SIDE_STREAMS=0)|" \
    "pushed no side $(bench_with CANDLE_RNN_PERSISTENT_PUSH=1,1 CANDLE_RNN_PERSISTENT_SIDE_STREAMS=0)|" \
    "L2 untransposed $(bench_with CANDLE_RNN_PERSISTENT_TRANSPOSED=0)| L2 $(bench_with X=1)"
done 2>&1 | tee "$OUT/next-512.txt"
for push in 1,0 1,1; do
  CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 CANDLE_RNN_PERSISTENT_PUSH=$push timeout 60 "$D/bench_grid" --no-loop --loss sum \
    --input-grad --api direct --reps 1 --warmup 0 --mode lstm --shape 1,32,30,512 --variants $v 2>&1 >/dev/null \
    | head -20 | sed "s/^/push $push: /"
done 2>&1 | tee "$OUT/plans-512.txt"
