#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR at abc74d1 (Auto's trials time
# `Standard` stacks on the zero state they read): the op's GPU tests; `gpu_check --persistent`
# (every row of the crate's kernels against f64 and cuDNN, the backward now reading a null
# final-state gradient where the loss does not read the state); the default beside `Auto` on
# stacks and single layers given no state (Auto's pick and time).
#   results/2026-11-26-h100-no-zero-state/final.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/gpu-tests.log" | head
stamp "gpu_check --persistent"
timeout 300 "$D/gpu_check" --persistent > "$OUT/persistent.log" 2>&1
echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent.log") failed $(grep -c '| FAIL' "$OUT/persistent.log")"
grep -E "\| FAIL|panick|^Error" "$OUT/persistent.log" | head -8 | cut -c1-300
stamp "the default beside Auto"
for c in gru:3,128,30,1024 lstm:3,128,30,512 gru:1,32,30,512 lstm:1,128,30,1024; do
  IFS=: read -r cell shape <<< "$c"
  timeout 100 "$D/bench_grid" --no-loop --graph --loss sum --input-grad --api direct --reps 10 --warmup 3 \
    --phase train --mode $cell --shape $shape --variants op-bf16-default,op-bf16-auto,op-tf32-default,op-tf32-auto \
    2>&1 | grep -E '^\| (Lstm|Gru) ' | cut -d'|' -f2-8
done | tee "$OUT/auto.txt"
(cd "$OUT" && tar -czf final.tgz --exclude auto.txt ./* && find . -type f ! -name final.tgz ! -name auto.txt -delete)
stamp done
