#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old REV`: graphed training | forward,
# µs an example, bf16 on the crate's kernels through `candle_cudnn_rnn::backward` (--api
# direct), old / new / old / new; then one replayed training call of GRU [30, 32, 512] of each
# build traced node by node (the CUPTI tracer of results/2026-11-26-h200-graph-kernels/).
#   results/2026-11-26-h100-one-fill/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct"
for c in gru:1,32,30,512 gru:1,32,30,128 lstm:1,32,30,1024 gru:3,32,30,512 lstm:2,20,35,1500 lstm:1,128,30,512; do
  IFS=: read -r cell shape <<< "$c"
  line=""
  for who in old new old new; do
    b=$D/bench_grid; [ $who = old ] && b=$D/old-bench_grid
    line="$line | $who $("$b" $how --mode $cell --shape $shape --variants op-bf16-persistent 2>&1 \
      | grep -E '^\| (Lstm|Gru) ' | cut -d'|' -f8-9 | tr -s ' ')"
  done
  echo "$cell [$shape]$line"
done | tee "$OUT/timings.txt"
for who in old new; do
  b=$D/bench_grid; [ $who = old ] && b=$D/old-bench_grid
  CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/t.csv timeout 60 \
    "$b" $how --mode gru --shape 1,32,30,512 --variants op-bf16-persistent > /dev/null 2>&1
  python3 results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/t.csv" 3 > "$OUT/trace_gru_512_$who.txt"
  rm -f "$OUT/t.csv"
  echo "$who:"; grep -A10 "^graph 2" "$OUT/trace_gru_512_$who.txt" | cut -c1-110
done
stamp done
