#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at b632e49: the persistent kernels'
# tuning knobs (`persistent/tuning.rs`) on the single-layer GRU grid shapes at batch 32, where
# ours train 1.6x faster than PyTorch's fp16 module and issue 33 asks 2x: bf16 on the crate's
# kernels, graphed, µs an example, train | forward, two passes each, beside the default
# tuning: the forward in clusters of 2 and 4 (CANDLE_RNN_PERSISTENT_CLUSTER=F,B with B the
# backward's default), the backward's chunks of 32 gate columns, one thread-block cluster.
#   results/2026-11-26-h200-gru-knobs/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --api direct --variants op-bf16-persistent --mode gru"
for shape in 1,32,30,128 1,32,30,512 1,32,30,1024; do
  H=${shape##*,}
  b=2; [ $H = 128 ] && b=1
  line=""
  for knob in default CANDLE_RNN_PERSISTENT_CLUSTER=2,$b CANDLE_RNN_PERSISTENT_CLUSTER=4,$b CANDLE_RNN_PERSISTENT_CHUNK=32 \
      CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 default; do
    f="$OUT/t_${shape//,/x}_${knob//[=,]/_}.log"
    if [ $knob = default ]; then "$D/bench_grid" $how --shape $shape > "$f" 2>&1
    else env $knob "$D/bench_grid" $how --shape $shape > "$f" 2>&1; fi
    line="$line | ${knob#CANDLE_RNN_PERSISTENT_} $(grep -E '^\| Gru ' "$f" | head -1 | cut -d'|' -f8,9 | tr -s ' ')"
  done
  echo "gru $shape$line"
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
