#!/usr/bin/env bash
# On the GPU machine, bench_grid of `scripts/devbin.sh DIR` at main: the whole grid in every
# precision class, the op's default algorithm (and cuDNN's standard in fp32 and bf16) against
# PyTorch's fp32, TF32 and fp16 modules, in one command (scripts/compare-grid.sh: graphed
# training in passes of alternating order, eager training and forwards).
#   results/2026-11-26-h200-grid/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "the grid"
timeout 560 scripts/compare-grid.sh "$D/bench_grid" "$OUT/grid" 10 3 > "$OUT/grid.log" 2>&1
echo "compare-grid rc=$?"
grep -E "^\| (fp32|tf32|half) " "$OUT/grid/table.md"
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
