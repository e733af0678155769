#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR at the last commit of the issue: the GPU
# tests; RnnAlgo::Auto in f16 run twice, now timing graphs' replays (its picks against the
# graphed benchmark's); the default in half precision at hidden 128 (cuDNN's
# PersistStaticSmallH for f16) beside PyTorch's fp16 module; PTB large bf16's first epoch.
#   results/2026-11-25-h100-plain-api/verify.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 120 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/op-gpu-tests.log" 2>&1
echo "op-gpu-tests rc=$?"; grep -E "test result|FAILED|panicked" "$OUT/op-gpu-tests.log" | head -5
stamp "Auto f16 twice"
for run in 1 2; do
  timeout 130 "$D/bench_grid" --no-loop --graph --loss sum --input-grad --api direct --reps 3 --warmup 2 --phase train --variants op-f16-auto --json "$OUT/auto_f16_$run.json" > "$OUT/auto_f16_$run.log" 2>&1; echo "auto $run rc=$?"
done
stamp "half precision at hidden 128: ours (default), PyTorch fp16"
for s in 1,32,30,128 1,128,30,128; do
  for m in lstm gru; do
    timeout 30 "$D/bench_grid" --no-loop --graph --loss sum --input-grad --api direct --reps 5 --warmup 3 --mode $m --shape $s --variants op-f16-default,op-bf16-default --json "$OUT/h128-$m-$s.json" >> "$OUT/h128.log" 2>&1 || echo "h128 $m $s failed"
  done
done
PYTHONUNBUFFERED=1 timeout 60 python3 scripts/torch_reference.py --grid --graph --loss sum --input-grad --reps 5 --warmup 3 --impls torch-fp16 --only lstm,1,32,30,128 --only gru,1,32,30,128 --only lstm,1,128,30,128 --only gru,1,128,30,128 --json "$OUT/h128-torch.json" > "$OUT/h128-torch.log" 2>&1; echo "torch rc=$?"
stamp "PTB large bf16, epoch 1"
timeout 90 "$D/ptb-lm" train --config large --precision bf16 --epochs 1 --out /tmp/large > "$OUT/large-epoch1.log" 2> "$OUT/large-epoch1.err"; echo "train rc=$?"
grep -E "^Epoch" "$OUT/large-epoch1.log"; grep "run on" "$OUT/large-epoch1.err"
stamp done
