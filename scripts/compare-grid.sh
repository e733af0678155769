#!/usr/bin/env bash
# The op against PyTorch on the whole grid, in one command on one GPU, as a model trains it (the
# outputs' gradient given, the input's computed, the weight's into candle's store through
# candle_cudnn_rnn::backward) and inference forwards: both captured as CUDA graphs in passes of
# alternating order (op, PyTorch, PyTorch, op) with the same warm-up and repetitions, then both
# eager (op, PyTorch); then the tables of ratios against PyTorch's fastest in each precision
# class, with the kernel that served, and a summary of their geo-means (scripts/compare_table.py).
# Arguments after the fourth go to bench_grid (e.g. --variants ...; its default: the op's default
# algorithm in every precision, and cuDNN's standard in fp32 and bf16); COMPARE_IMPLS narrows
# PyTorch's side (default torch-fp32,torch-tf32,torch-fp16). Run on a GPU machine:
#   scripts/compare-grid.sh BENCH_GRID OUT_DIR [REPS] [WARMUP] [BENCH_GRID ARGS...]
set -euo pipefail
grid=$1 out=$2 reps=${3:-10} warmup=${4:-10}
shift $(( $# < 4 ? $# : 4 ))
mkdir -p "$out"
how="--loss sum --input-grad --reps $reps --warmup $warmup"
op() { "$grid" --no-loop $how --api direct "${@:2}" --json "$out/op_$1.json" > "$out/op_$1.log"; }
torch() { python3 scripts/torch_reference.py --grid $how --impls "${COMPARE_IMPLS:-torch-fp32,torch-tf32,torch-fp16}" "${@:2}" --json "$out/torch_$1.json" > "$out/torch_$1.log" 2>&1; }
op a --graph "$@"; torch a --graph; torch b --graph; op b --graph "$@"
op eager "$@"; torch eager
python3 scripts/compare_table.py "$out" | tee "$out/table.md"
