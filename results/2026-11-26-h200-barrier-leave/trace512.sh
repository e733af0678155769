#!/usr/bin/env bash
# On the GPU machine, after run.sh: the nodes of one replayed training call of LSTM [30, 32,
# 512] bf16 (3% slower with the barrier change in run.sh's timings) and of GRU [30, 32, 512]
# (5% faster), old and new binaries, twice each.
#   results/2026-11-26-h200-barrier-leave/trace512.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --variants op-bf16-default --api direct"
for round in 1 2; do for cell in lstm gru; do for who in old new; do
  name=trace512_${cell}_${who}_$round
  bin=$D/bench_grid; [ $who = old ] && bin=$D/old-bench_grid
  CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv \
    "$bin" $how --mode $cell --shape 1,32,30,512 > "$OUT/$name.log" 2>&1
  python3 results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/$name.csv" 5 > "$OUT/$name.txt"
  rm -f "$OUT/$name.csv"
  echo "$name: $(grep -E '^\| (Lstm|Gru) ' "$OUT/$name.log" | cut -d'|' -f8)"; cut -c1-110 "$OUT/$name.txt"
done; done; done
(cd "$OUT" && tar -czf trace512.tgz --exclude trace512.tgz --exclude console.txt ./* && find . -type f ! -name trace512.tgz ! -name console.txt -delete)
