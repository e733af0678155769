#!/usr/bin/env bash
# On the GPU machine: the backward kernel's duration in one replayed graphed training call
# (CUPTI tracer), workers off, on, on with 4 µs between polls (sleep-bench_grid), and on but
# only polling, no copies or products (poll-bench_grid), and launched but leaving at once
# (exit-bench_grid; both give wrong weight gradients). The three variants were built from
# weight_grad.cu with the one change each, then reverted.
#   results/2026-11-26-h100-weight-workers/variants.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct"
for c in gru:1,32,30,512 lstm:1,32,30,512; do
  IFS=: read -r cell shape <<< "$c"
  for v in off:bench_grid on:bench_grid sleep:sleep-bench_grid poll:poll-bench_grid exit:exit-bench_grid; do
    IFS=: read -r name bin <<< "$v"
    w=1; [ $name = off ] && w=0
    CANDLE_RNN_PERSISTENT_WORKERS=$w CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/t.csv timeout 60 \
      "$D/$bin" $how --mode $cell --shape $shape --variants op-bf16-persistent > /dev/null 2>&1
    f="$OUT/trace_${cell}_${shape//,/x}_$name.txt"
    python3 results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/t.csv" 3 > "$f"
    rm -f "$OUT/t.csv"
    echo "$cell [$shape] $name: $(grep -m1 '^graph 2' "$f" | grep -o 'span [0-9.]* us') bwd $(grep -m1 persistent_bwd "$f" | awk '{print $4}') µs"
  done
done
stamp done
