#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: the op with its default algorithm
# (RnnAlgo::Heuristic) against PyTorch on the grid, ours / PyTorch / ours, graphed training calls
# (`--api direct`) and eager forwards, every precision; half-precision training eager too; the
# plain API's cost (`loss.backward()`, `candle_cudnn_rnn::backward`, the sink) with and without
# candle-nn's SGD; RnnAlgo::Auto run twice (its picks must agree); the GPU tests; PTB large.
#   results/2026-11-25-h100-plain-api/final.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/smi.txt" 2>&1
R="--reps 5 --warmup 3"
OPS="--no-loop --loss sum --input-grad --api direct $R --variants op-fp32-default,op-tf32-default,op-bf16-default,op-f16-default"
op() { timeout 150 "$D/bench_grid" $OPS --graph --json "$OUT/op_$1.json" > "$OUT/op_$1.log" 2>&1; echo "op $1 rc=$?"; }
torch() { PYTHONUNBUFFERED=1 timeout 150 python3 scripts/torch_reference.py --grid --graph --loss sum --input-grad $R --impls torch-fp32,torch-tf32,torch-fp16 --json "$OUT/torch_$1.json" > "$OUT/torch_$1.log" 2>&1; echo "torch $1 rc=$?"; }
stamp "grid: ours, PyTorch, ours (graphed training, eager forward)"
op a; torch a; op b
stamp "half precision training eager: ours, PyTorch"
timeout 60 "$D/bench_grid" --no-loop --loss sum --input-grad --api direct $R --phase train --variants op-bf16-default,op-f16-default --json "$OUT/op_eager.json" > "$OUT/op_eager.log" 2>&1; echo "op eager rc=$?"
PYTHONUNBUFFERED=1 timeout 90 python3 scripts/torch_reference.py --grid --loss sum --input-grad $R --impls torch-fp16 --json "$OUT/torch_eager.json" > "$OUT/torch_eager.log" 2>&1; echo "torch eager rc=$?"
stamp "the plain API's cost"
for sv in 2,20,35,1500:op-bf16-default 1,32,30,1024:op-bf16-default 3,128,30,1024:op-tf32-default 1,128,30,128:op-tf32-default; do
  s=${sv%%:*} v=${sv##*:}
  for x in 1; do
    for api in plain direct sink-overwrite; do
      for sgd in "" --sgd; do
        timeout 40 "$D/bench_grid" --no-loop --graph --loss sum --input-grad $R --phase train --mode lstm --shape $s --variants $v --api $api $sgd --json "$OUT/api-$s-$v-$api$sgd.json" >> "$OUT/api.log" 2>&1 || echo "api $s $v $api $sgd failed"
      done
    done
  done
done
stamp "Auto twice"
for run in 1 2; do
  timeout 100 "$D/bench_grid" --no-loop --graph --loss sum --input-grad --api direct --reps 3 --warmup 2 --phase train --variants op-tf32-auto,op-f16-auto --json "$OUT/auto_$run.json" > "$OUT/auto_$run.log" 2>&1; echo "auto $run rc=$?"
done
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 120 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/op-gpu-tests.log" 2>&1
echo "op-gpu-tests rc=$?"; grep -E "test result|FAILED|panicked" "$OUT/op-gpu-tests.log" | head -5
stamp "PTB large bf16 (--rnn auto)"
timeout 60 "$D/ptb-lm" bench --config large --precision bf16 --data data/ptb --batches 100 --warmup 20 > "$OUT/ptb-large-bench.json" 2> "$OUT/ptb-large-bench.err"; echo "bench rc=$?"; tail -1 "$OUT/ptb-large-bench.err" | cut -c1-250
stamp done
