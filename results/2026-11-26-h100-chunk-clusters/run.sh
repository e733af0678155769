#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at f7409c1: batches of several chunks
# (64, 128) on the crate's kernels with the forward's and backward's blocks in clusters that split
# K (CANDLE_RNN_PERSISTENT_CLUSTER=F,B; each block then reads a part of h_{t-1} a step, where
# every block reads all of it unclustered) and with more units per block
# (CANDLE_RNN_PERSISTENT_UNITS=F,B), bf16, graphed training | forward, µs an example, --api
# direct, the planner's choice first and last; then bf16 `Standard` beside them.
#   results/2026-11-26-h100-chunk-clusters/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --api direct"
row() { grep -E '^\| (Lstm|Gru) ' "$1" | cut -d'|' -f8,9 | tr -s ' ' | tr '\n' ';'; }
for shape in 1,128,30,512 1,128,30,1024 1,64,30,512 1,128,30,256; do
  for cell in gru lstm; do
    stamp "$cell $shape"
    for k in rule CLUSTER=2,2 CLUSTER=4,4 CLUSTER=2,4 UNITS=8,8:CLUSTER=2,2 rule; do
      f="$OUT/${cell}_${shape//,/x}_${k//[=,:]/-}.log"
      envs=(); [ $k = rule ] || for kv in ${k//:/ }; do envs+=("CANDLE_RNN_PERSISTENT_$kv"); done
      env "${envs[@]}" "$D/bench_grid" $how --mode $cell --shape $shape --variants op-bf16-persistent > "$f" 2>&1
      echo "  $k: $(row "$f")"
    done
    f="$OUT/${cell}_${shape//,/x}_standard.log"
    "$D/bench_grid" $how --mode $cell --shape $shape --variants op-bf16-standard > "$f" 2>&1
    echo "  bf16 Standard: $(row "$f")"
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
