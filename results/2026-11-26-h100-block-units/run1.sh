#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR`: units per block of a single layer on
# the crate's kernels (CANDLE_RNN_PERSISTENT_UNITS=F,B, forward and backward; fewer units, more
# blocks) against the planner's rule, bf16 graphed training | forward, µs an example, through
# `candle_cudnn_rnn::backward` (--api direct); the rule's row first and last. Then PyTorch's fp16
# module on the same shapes.
#   results/2026-11-26-h100-block-units/run1.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10"
row() { grep -E '^\| (Lstm|Gru) ' "$1" | head -1 | cut -d'|' -f8,9 | tr -s ' '; }
for c in "1,32,30,512:4,8 8,4 8,8 16,8 8,16" "1,32,30,1024:16,8 8,16 16,16" "1,32,30,128:8 16" \
  "1,32,200,512:8,8 8,16" "1,128,30,512:8,8 8,16 16,16" "1,32,30,256:8 16"; do
  shape=${c%%:*} sets=${c#*:}
  for cell in lstm gru; do
    stamp "$cell $shape"
    for u in rule $sets rule; do
      f="$OUT/${cell}_${shape//,/x}_u${u//,/-}.log"
      if [ $u = rule ]; then "$D/bench_grid" $how --api direct --mode $cell --shape $shape --variants op-bf16-persistent > "$f" 2>&1
      else CANDLE_RNN_PERSISTENT_UNITS=$u "$D/bench_grid" $how --api direct --mode $cell --shape $shape --variants op-bf16-persistent > "$f" 2>&1; fi
      echo "  units $u: $(row "$f")"
    done
  done
done
for c in "gru 1,32,30,512" "gru 1,32,30,1024" "lstm 1,32,30,512" "lstm 1,32,30,1024" "gru 1,32,30,128"; do
  set -- $c
  f="$OUT/torch_$1_${2//,/x}.log"
  python3 scripts/torch_reference.py --grid --graph $how --only $1,$2 --impls torch-fp16 > "$f" 2>&1
  echo "torch fp16 $1 $2: $(grep -E '^\| *(lstm|gru|Lstm|Gru) ' "$f" | head -1 | tr -s ' ')"
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
