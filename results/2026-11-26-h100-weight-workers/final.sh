#!/usr/bin/env bash
# On the GPU machine, binaries of 64d418f (the barrier's 32 ns sleep): compute-sanitizer
# memcheck, synccheck and racecheck over the GPU test of calls given no state (the kernels'
# backward in a layer and a stack); then graphed training through the plain API
# (`loss.backward()`), µs an example, ours (bf16, the op's default) / PyTorch's fp16 module /
# ours, GRU and LSTM [30, 32, 512].
#   results/2026-11-26-h100-weight-workers/final.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
for tool in memcheck synccheck racecheck; do
  stamp "$tool"
  RNN_TEST_REQUIRE_GPU=1 timeout 150 "$CS" --tool $tool "$D/op-gpu-tests" a_call_given_no_state --test-threads=1 \
    > "$OUT/$tool.log" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result" "$OUT/$tool.log" | head -3
done
stamp "plain API against PyTorch"
how="--loss sum --input-grad --reps 10 --warmup 5"
for s in 1,32,30,512; do
  for cell in gru lstm; do
    line="$cell [$s]"
    for who in ours torch ours; do
      if [ $who = ours ]; then
        v=$(timeout 60 "$D/bench_grid" --no-loop --graph $how --api plain --mode $cell --shape $s --variants op-bf16-default 2>&1 \
          | grep -E '^\| (Lstm|Gru) ' | cut -d'|' -f8 | tr -d ' ')
      else
        v=$(timeout 100 python3 scripts/torch_reference.py --grid --graph $how --only $cell,$s --impls torch-fp16 2>&1 \
          | grep -iE "^\| *$cell" | head -1)
      fi
      line="$line | $who $v"
    done
    echo "$line"
  done
done | tee "$OUT/plain.txt"
stamp done
