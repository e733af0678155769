#!/usr/bin/env bash
# On the GPU machine: graphed training (with the input's gradient) and the forward, µs an example,
# in 4 batch groups of 32 (the wgmma forward's) against the rule's (8 groups of 16 at hidden 512,
# batch 128), 4 / rule / 4, at the grid's [*, 128, *512] shapes (OUT/groups.log): whether a
# training call whose forward runs on wgmma can keep one batch grouping for both passes.
#   results/2026-11-30-h200-wgmma-train-forward/groups.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
graph=--graph
for spec in op-f16-default:lstm:1,128,30,512 op-f16-default:gru:1,128,30,512 \
  op-f16-default:lstm:3,128,30,512 op-f16-default:gru:3,128,30,512 \
  op-f16-default:lstm:3,128,200,512 op-bf16-default:gru:3,128,200,512; do
  split_spec "$spec"
  echo "$v $c $sh | 4 $(bench_with CANDLE_RNN_PERSISTENT_GROUPS=4) | rule $(bench_with X=1) | 4 $(bench_with CANDLE_RNN_PERSISTENT_GROUPS=4)"
done 2>&1 | tee "$OUT/groups.log"
# The training plans the rule gives (OUT/plans.txt).
for spec in op-f16-default:lstm:3,128,30,512 op-f16-default:gru:1,128,30,512; do
  split_spec "$spec"
  CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 60 "$D/bench_grid" --no-loop --graph --loss sum --input-grad \
    --reps 1 --warmup 0 --phase train --mode $c --shape $sh --variants $v 2>&1 \
    | grep -E "candle-cudnn-rnn:|^\| (Lstm|Gru) " | sed "s/^/$v $c $sh /"
done > "$OUT/plans.txt"
cat "$OUT/plans.txt" | cut -c1-400
