#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at f7409c1 (single layers in blocks of
# at least 8 units): where a single-layer training call's time goes at seq 30, batch 32.
# One replayed graphed training call (bench_grid's, as the grid times it) traced node by node
# with results/2026-11-26-h200-graph-kernels/'s tracer: the op's default in bf16 (the crate's
# kernels) through candle_cudnn_rnn::backward, GRU at hidden 512 and 1024; the timed medians
# of each first.
#   results/2026-11-26-h100-gru-call-trace/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--loss sum --input-grad"
for spec in gru,512 gru,1024; do
  cell=${spec%,*} h=${spec#*,}
  for who in ours; do
    name=${who}_${cell}_$h
    case $who in
      ours) run=("$D/bench_grid" --no-loop --graph $how --api direct --mode $cell --shape 1,32,30,$h --variants op-bf16-default) ;;
      torch) run=(python3 scripts/torch_reference.py --grid --graph $how --only $cell,1,32,30,$h --impls torch-fp16) ;;
    esac
    "${run[@]}" --reps 20 --warmup 5 > "$OUT/$name.log" 2>&1
    echo "$name: $(grep -E '^\| (lstm|gru|Lstm|Gru) ' "$OUT/$name.log" | head -1)"
    CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv \
      "${run[@]}" --reps 5 --warmup 2 > "$OUT/${name}_trace.log" 2>&1
    python3 results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/$name.csv" 3 > "$OUT/trace_$name.txt"
    rm -f "$OUT/$name.csv"
    cut -c1-140 "$OUT/trace_$name.txt" | head -60
  done
done
stamp "done"
