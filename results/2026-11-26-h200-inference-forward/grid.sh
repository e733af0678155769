#!/usr/bin/env bash
# On the GPU machine, bench_grid of `scripts/devbin.sh DIR` at main: the whole grid in every
# precision class against PyTorch (scripts/compare-grid.sh, as results/2026-11-26-h200-grid-fill/),
# the forward column now an inference call on both sides.
#   results/2026-11-26-h200-inference-forward/grid.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "the grid"
timeout 540 scripts/compare-grid.sh "$D/bench_grid" "$OUT/grid" 10 3 > "$OUT/grid.log" 2>&1
echo "compare-grid rc=$?"
grep -E "^\| (fp32|tf32|half) " "$OUT/grid/table.md"
(cd "$OUT" && tar -czf grid.tgz --exclude grid.tgz --exclude console.txt ./* && find . -type f ! -name grid.tgz ! -name console.txt -delete)
stamp "done"
