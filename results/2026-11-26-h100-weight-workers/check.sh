#!/usr/bin/env bash
# On the GPU machine, binaries of the working tree (the backward's weight-gradient workers,
# weight_grad.cu, on with CANDLE_RNN_PERSISTENT_WORKERS=1): `gpu_check --persistent` and the
# op's GPU tests with the workers on, after graphed training | forward, µs an example, bf16 on
# the crate's kernels through `candle_cudnn_rnn::backward`, workers off / on / off / on.
#   results/2026-11-26-h100-weight-workers/check.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
stamp "timings"
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct"
for c in gru:1,32,30,512 lstm:1,32,30,512 gru:1,32,200,512 gru:1,32,30,256 gru:1,8,30,512 gru:1,64,30,512; do
  IFS=: read -r cell shape <<< "$c"
  line=""
  for w in 0 1 0 1; do
    line="$line | w$w $(CANDLE_RNN_PERSISTENT_WORKERS=$w timeout 60 "$D/bench_grid" $how --mode $cell --shape $shape --variants op-bf16-persistent 2>&1 \
      | grep -E '^\| (Lstm|Gru) ' | cut -d'|' -f8-9 | tr -s ' ')"
  done
  echo "$cell [$shape]$line"
done | tee "$OUT/timings.txt"
[ "${TIMINGS_ONLY:-0}" = 1 ] && { stamp done; exit 0; }
stamp "gpu_check --persistent, workers on"
CANDLE_RNN_PERSISTENT_WORKERS=1 timeout ${GPU_CHECK_LIMIT:-280} "$D/gpu_check" --persistent --seed 2611 > "$OUT/persistent-workers.log" 2>&1
echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent-workers.log") failed $(grep -c '| FAIL' "$OUT/persistent-workers.log")"
grep -E "\| FAIL|panick|^Error|rror" "$OUT/persistent-workers.log" | head -8 | cut -c1-300
stamp "GPU tests, workers on"
CANDLE_RNN_PERSISTENT_WORKERS=1 RNN_TEST_REQUIRE_GPU=1 timeout 150 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests-workers.log" 2>&1
echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/gpu-tests-workers.log" | head
stamp done
