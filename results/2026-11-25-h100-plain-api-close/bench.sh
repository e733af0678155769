#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: graphed training calls on the grid,
# (1) the default in TF32, fp32 and bf16 through candle_cudnn_rnn::backward (`--api direct`)
# beside PyTorch's TF32 and fp32 modules in passes of alternating order (op, PyTorch, PyTorch,
# op), 10 repetitions each; (2) the same variants through the weight-gradient sink (the plain
# API's cost); (3) the default beside RnnAlgo::Auto (which times every kernel that takes the
# call and keeps the fastest) in TF32 and f16: the default's time against the best single
# algorithm's.
#   results/2026-11-25-h100-plain-api-close/bench.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/smi.txt" 2>&1
R="--reps 10 --warmup 5"
V=op-tf32-default,op-fp32-default,op-bf16-default
op() { timeout 120 "$D/bench_grid" --no-loop --graph --loss sum --input-grad $R --phase train --variants $V --api $2 --json "$OUT/op_$1.json" > "$OUT/op_$1.log" 2>&1; echo "op $1 rc=$?"; }
torch() { PYTHONUNBUFFERED=1 timeout 100 python3 scripts/torch_reference.py --grid --graph --loss sum --input-grad $R --impls torch-tf32,torch-fp32 --json "$OUT/torch_$1.json" > "$OUT/torch_$1.log" 2>&1; echo "torch $1 rc=$?"; }
stamp "ours, PyTorch, PyTorch, ours"
op a direct; torch a; torch b; op b direct
stamp "through the sink"
op sink sink-overwrite
stamp "default beside Auto"
timeout 200 "$D/bench_grid" --no-loop --graph --loss sum --input-grad --api direct --reps 5 --warmup 3 --phase train --variants op-tf32-default,op-tf32-auto,op-f16-default,op-f16-auto --json "$OUT/auto.json" > "$OUT/auto.log" 2>&1; echo "auto rc=$?"
stamp done
