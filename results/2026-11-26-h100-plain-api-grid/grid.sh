#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: the whole grid in every precision class
# (scripts/compare-grid.sh with its defaults: the op's default in fp32, TF32, bf16 and f16 and
# cuDNN's standard in fp32 and bf16, beside PyTorch's fp32, TF32 and fp16 modules; graphed
# passes ours / PyTorch / PyTorch / ours, then eager), issue 32's closing table.
#   results/2026-11-26-h100-plain-api-grid/grid.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/smi.txt" 2>&1
stamp "the grid"
timeout 560 scripts/compare-grid.sh "$D/bench_grid" "$OUT/grid" 10 3 > "$OUT/grid.log" 2>&1
echo "compare-grid rc=$?"
grep -E "^\| (fp32|tf32|half) " "$OUT/grid/table.md"
stamp "done"
