#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` built with lanes.patch applied: graphed
# training | forward, µs an example, bf16 on the crate's kernels through
# `candle_cudnn_rnn::backward`, the backward's products one after another on candle's stream
# (CANDLE_RNN_PERSISTENT_LANES=0) and at once on three streams (1), alternating; then one
# replayed training call of GRU [30, 32, 512] with the lanes traced node by node (the CUPTI
# tracer of results/2026-11-26-h200-graph-kernels/).
#   results/2026-11-26-h100-lanes/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct"
for s in 1,32,30,512 1,32,30,1024 3,32,30,512; do
  for l in 0 1 0 1; do
    echo "$s lanes $l: $(CANDLE_RNN_PERSISTENT_LANES=$l timeout 60 "$D/bench_grid" $how --mode gru --shape $s \
      --variants op-bf16-persistent 2>&1 | grep -E '^\| Gru' | cut -d'|' -f8-9)"
  done
done | tee "$OUT/timings.txt"
CANDLE_RNN_PERSISTENT_LANES=1 CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/t1.csv \
  timeout 60 "$D/bench_grid" $how --mode gru --shape 1,32,30,512 --variants op-bf16-persistent > /dev/null 2>&1
python3 results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/t1.csv" 3 > "$OUT/trace_gru_512_lanes1.txt"
rm -f "$OUT/t1.csv"
