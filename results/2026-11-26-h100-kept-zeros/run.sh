#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at e41aaaa (calls given no state share
# one kept zero state) with DIR/old-bench_grid from 33c2ee7 (a zero state made per call): the
# op's GPU tests, then the half-precision grid against PyTorch's fp16 module with each
# (scripts/compare-grid.sh, the op's default in bf16 and f16), new then old.
#   results/2026-11-26-h100-kept-zeros/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 300 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "gpu tests rc=$?: $(grep -E '^test result' "$OUT/gpu-tests.log")"
for b in new old; do
  bin=$D/bench_grid; [ $b = old ] && bin=$D/old-bench_grid
  stamp "grid, $b"
  COMPARE_IMPLS=torch-fp16 timeout 240 scripts/compare-grid.sh "$bin" "$OUT/$b" 10 3 \
    --variants op-bf16-default,op-f16-default > "$OUT/$b.log" 2>&1
  echo "$b rc=$?"; grep -E "^\| half " "$OUT/$b/table.md" | tail -1
done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt ! -name '*.md' -delete)
stamp done
