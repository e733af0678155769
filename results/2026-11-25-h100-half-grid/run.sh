#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at 410455e (the backward's clusters and
# one cluster by shape): the persistent GPU tests (single-bias and bias-free cells new); then
# the half-precision grid, the op's default algorithm in bf16 and f16 against PyTorch's fp16
# module, graphed training in passes op / PyTorch / PyTorch / op, eager training and forward
# (scripts/compare-grid.sh with COMPARE_IMPLS=torch-fp16).
#   results/2026-11-25-h100-half-grid/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "persistent GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 120 "$D/op-gpu-tests" --nocapture --test-threads=1 persistent > "$OUT/op-gpu-tests.log" 2>&1
echo "op-gpu-tests rc=$? $(grep -E 'test result' "$OUT/op-gpu-tests.log" | tail -1)"
grep -E "FAILED|panicked|failed:" "$OUT/op-gpu-tests.log" | head -8 | cut -c1-300
stamp "half-precision grid"
COMPARE_IMPLS=torch-fp16 timeout 400 scripts/compare-grid.sh "$D/bench_grid" "$OUT/grid" 10 3 \
  --variants op-bf16-default,op-f16-default > "$OUT/grid.log" 2>&1
echo "compare-grid rc=$?"
tail -n 60 "$OUT/grid/table.md" 2>/dev/null | grep -E "geo|lose|worst|half" | head -20
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
