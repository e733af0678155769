#!/usr/bin/env bash
# On the GPU machine, binaries of the working tree: one replayed graphed training call of each
# shape traced node by node (the CUPTI tracer of results/2026-11-26-h200-graph-kernels/), the
# weight-gradient workers off and on (CANDLE_RNN_PERSISTENT_WORKERS=0|1).
#   results/2026-11-26-h100-weight-workers/trace.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct"
for c in gru:1,32,30,512 lstm:1,32,30,512 gru:1,32,30,256; do
  IFS=: read -r cell shape <<< "$c"
  for w in 0 1; do
    CANDLE_RNN_PERSISTENT_WORKERS=$w CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/t.csv timeout 60 \
      "$D/bench_grid" $how --mode $cell --shape $shape --variants op-bf16-persistent > /dev/null 2>&1
    f="$OUT/trace_${cell}_${shape//,/x}_w$w.txt"
    python3 results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/t.csv" 3 > "$f"
    rm -f "$OUT/t.csv"
    echo "$cell [$shape] workers $w:"; grep -A10 "^graph 2" "$f" | cut -c1-110
  done
done
stamp done
