#!/usr/bin/env bash
# The op against PyTorch on the whole grid, in one command on one GPU: passes in alternating
# order (op, PyTorch, PyTorch, op) with the same warm-up and repetitions, then the table of
# ratios (scripts/compare_table.py). Arguments after the fourth go to bench_grid (e.g.
# --sink, --variants ...). Run on a GPU machine:
#   scripts/compare-grid.sh BENCH_GRID OUT_DIR [REPS] [WARMUP] [BENCH_GRID ARGS...]
set -euo pipefail
grid=$1 out=$2 reps=${3:-10} warmup=${4:-10}
shift $(( $# < 4 ? $# : 4 ))
mkdir -p "$out"
op() { "$grid" --no-loop --reps "$reps" --warmup "$warmup" "${@:2}" --json "$out/op_$1.json" > "$out/op_$1.log"; }
torch() { python3 scripts/torch_reference.py --grid --impls torch-fp32,torch-tf32,torch-amp-bf16 --reps "$reps" --warmup "$warmup" --json "$out/torch_$1.json" > "$out/torch_$1.log" 2>&1; }
op a "$@"; torch a; torch b; op b "$@"
python3 scripts/compare_table.py "$out" | tee "$out/table.md"
