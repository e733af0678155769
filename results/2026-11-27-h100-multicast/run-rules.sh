#!/usr/bin/env bash
# On the GPU machine: racecheck and synccheck on the multicast's GPU test (batches 20 and 40),
# then where the default's rules stand at batch 128 now that the forward multicasts: bf16 on the
# crate's kernels against cuDNN's bf16 `Standard`, f16 default and bf16 default, training |
# inference forward, µs an example, graphed and eager (`--api direct`).
#   results/2026-11-27-h100-multicast/run-rules.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
for tool in synccheck racecheck; do
  stamp "$tool"
  RNN_TEST_REQUIRE_GPU=1 timeout 200 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 \
    persistent_multicast_forward > "$OUT/sanitizer-$tool.log" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result|Race reported" "$OUT/sanitizer-$tool.log" | sort | uniq -c
done
how="--loss sum --input-grad --reps 10 --warmup 5 --api direct"
for g in --graph ""; do
  stamp "${g:-eager}"
  for s in 1,128,30,512 1,128,30,256; do
    for cell in gru lstm; do
      timeout 100 "$D/bench_grid" --no-loop $g $how --mode $cell --shape $s \
        --variants op-bf16-persistent,op-bf16-standard,op-f16-default,op-bf16-default,op-bf16-persistent 2>>"$OUT/stderr.txt" \
        | grep -E '^\| (Lstm|Gru) ' | awk -F'|' -v g="${g:-eager}" '{print g, $0}'
    done
  done
done | tee "$OUT/rules.txt"
stamp done
