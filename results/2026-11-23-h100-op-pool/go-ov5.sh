#!/usr/bin/env bash
# issue 14: the op (plain autograd, pool kept) against PyTorch on the whole grid, alternating passes
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
xz -dkf -T8 .devbin/bench_grid.xz; chmod +x .devbin/bench_grid
date +%T
bash scripts/compare-grid.sh .devbin/bench_grid $OUT/grid 10 10 --variants op-fp32,op-fp32-auto,op-tf32,op-tf32-auto,op-bf16,op-bf16-auto
date +%T
