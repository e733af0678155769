#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: the half-precision grid at d65e15d (one fill a training call)
# (scripts/compare-grid.sh, the op's default in bf16 and f16 against PyTorch's fp16 module).
#   results/2026-11-26-h100-one-fill/grid.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "half grid"
COMPARE_IMPLS=torch-fp16 timeout 560 scripts/compare-grid.sh "$D/bench_grid" "$OUT/grid" 10 3 \
  --variants op-bf16-default,op-f16-default > "$OUT/grid.log" 2>&1
echo "rc=$?"; grep -E "^\| half " "$OUT/grid/table.md"
(cd "$OUT" && cp grid/table.md half-table.md && tar -czf grid.tgz grid && rm -rf grid)
stamp done
