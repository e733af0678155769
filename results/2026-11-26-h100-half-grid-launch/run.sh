#!/usr/bin/env bash
# On the GPU machine, bench_grid of `scripts/devbin.sh DIR` at 8b4277e (modules of its graphed
# passes built `Launch::Graphed`, of its eager ones `Launch::Eager`): the grid in half precision,
# the op's default in bf16 and f16 against PyTorch's fp16 module, in one command
# (scripts/compare-grid.sh: graphed training in passes of alternating order, eager training and
# forwards).
#   results/2026-11-26-h100-half-grid-launch/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "the grid, half precision"
COMPARE_IMPLS=torch-fp16 timeout 560 scripts/compare-grid.sh "$D/bench_grid" "$OUT/grid" 10 3 \
  --variants op-bf16-default,op-f16-default > "$OUT/grid.log" 2>&1
echo "compare-grid rc=$?"
grep -E "^\| (fp32|tf32|half) " "$OUT/grid/table.md"
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
