#!/usr/bin/env bash
# On the GPU machine: the grid barrier's polls with a 32 ns sleep between them (common.cuh's
# wait_acquire; bench_grid) against main's back-to-back polls (old-bench_grid), graphed training |
# forward, µs an example, bf16 on the crate's kernels, old / new / old / new; then the op's GPU
# tests on the new build.
#   results/2026-11-26-h100-weight-workers/confirm.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct"
for c in gru:1,32,30,512 lstm:1,32,30,512 lstm:1,32,30,1024 gru:1,32,30,1024 lstm:2,20,35,1500 gru:3,32,30,512 gru:1,32,200,512 lstm:1,64,30,512; do
  IFS=: read -r cell shape <<< "$c"
  line=""
  for v in old:old-bench_grid new:bench_grid old:old-bench_grid new:bench_grid; do
    IFS=: read -r name bin <<< "$v"
    line="$line | $name $(timeout 60 "$D/$bin" $how --mode $cell --shape $shape --variants op-bf16-persistent 2>&1 \
      | grep -E '^\| (Lstm|Gru) ' | cut -d'|' -f8-9 | tr -s ' ')"
  done
  echo "$cell [$shape]$line"
done | tee "$OUT/confirm.txt"
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 150 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/gpu-tests.log" | head
stamp done
