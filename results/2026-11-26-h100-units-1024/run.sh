#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at 26e34e2: units per block and the
# backward's clusters at hidden 1024 and 768, batch 32 (CANDLE_RNN_PERSISTENT_UNITS=F,B with
# CANDLE_RNN_PERSISTENT_CLUSTER=F,B), where the planner keeps 8 units and backward pairs; bf16 on
# the crate's kernels, graphed training | forward, µs an example, --api direct, the planner's
# row first and last.
#   results/2026-11-26-h100-units-1024/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --api direct"
row() { grep -E '^\| (Lstm|Gru) ' "$1" | head -1 | cut -d'|' -f8,9 | tr -s ' '; }
for shape in 1,32,30,1024 1,32,30,768; do
  for cell in gru lstm; do
    stamp "$cell $shape"
    for u in rule 8,16/1,2 8,16/1,4 16,16/1,2 16,8/1,2 12,12/1,2 12,8/1,2 8,8/1,4 rule; do
      f="$OUT/${cell}_${shape//,/x}_u${u//[,\/]/-}.log"
      if [ $u = rule ]; then "$D/bench_grid" $how --mode $cell --shape $shape --variants op-bf16-persistent > "$f" 2>&1
      else CANDLE_RNN_PERSISTENT_UNITS=${u%/*} CANDLE_RNN_PERSISTENT_CLUSTER=${u#*/} "$D/bench_grid" $how --mode $cell --shape $shape --variants op-bf16-persistent > "$f" 2>&1; fi
      echo "  units/clusters $u: $(row "$f")"
    done
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
