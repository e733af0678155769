#!/usr/bin/env bash
# The op against PyTorch on the whole grid, in one command on one GPU: passes in alternating
# order (op, PyTorch, PyTorch, op) with the same warm-up and repetitions, then the table of
# ratios (scripts/compare_table.py). Run on a GPU machine:
#   scripts/compare-grid.sh BENCH_GRID OUT_DIR [REPS] [WARMUP]
set -euo pipefail
grid=$1 out=$2 reps=${3:-10} warmup=${4:-10}
mkdir -p "$out"
op() { "$grid" --no-loop --reps "$reps" --warmup "$warmup" --json "$out/op_$1.json" > "$out/op_$1.log"; }
torch() { python3 scripts/torch_reference.py --grid --reps "$reps" --warmup "$warmup" --json "$out/torch_$1.json" > "$out/torch_$1.log" 2>&1; }
op a; torch a; torch b; op b
python3 scripts/compare_table.py "$out" | tee "$out/table.md"
