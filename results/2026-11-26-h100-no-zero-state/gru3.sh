#!/usr/bin/env bash
# On the GPU machine, binaries of run.sh: the 3-layer GRUs at hidden 1024 that the half grid
# showed 1-3% behind PyTorch after the change, on cuDNN's Standard in bf16: graphed training,
# old / new three times each; then one replayed training call of each build traced node by
# node, summed by kernel.
#   results/2026-11-26-h100-no-zero-state/gru3.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --api direct --reps 20 --warmup 5"
for shape in 3,128,30,1024 3,128,200,1024; do
  line=""
  for who in old new old new old new; do
    b=$D/bench_grid; [ $who = old ] && b=$D/old-bench_grid
    r=$("$b" $how --mode gru --shape $shape --variants op-bf16-default 2>&1 | grep -E '^\| Gru ' | cut -d'|' -f8-9 | tr -s ' ')
    line="$line | $who $r"
  done
  echo "gru [$shape] bf16$line"
done | tee "$OUT/gru3-timings.txt"
for who in old new; do
  b=$D/bench_grid; [ $who = old ] && b=$D/old-bench_grid
  CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/t.csv timeout 60 \
    "$b" --no-loop --graph --loss sum --input-grad --reps 10 --warmup 3 --api direct \
    --mode gru --shape 3,128,30,1024 --variants op-bf16-default > "$OUT/trace_$who.log" 2>&1
  python3 results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/t.csv" 3 --by-name > "$OUT/trace_gru3_$who.txt"; rm -f "$OUT/t.csv"
  echo "$who:"; grep -A14 "^graph 2" "$OUT/trace_gru3_$who.txt" | cut -c1-130
done
rm -f "$OUT"/trace_*.log
stamp done
