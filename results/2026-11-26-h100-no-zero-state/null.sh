#!/usr/bin/env bash
# On the GPU machine, binaries of final.sh plus DIR/null-bench_grid.xz: abc74d1 with
# `reads_zeros` off (cuDNN's `Standard` stacks handed NULL too, as run.sh's first build). The
# TF32 3-layer hidden-1024 stacks, where NULL was 1.5-2% faster at [30, 128, 3 x 1024] LSTM:
# zeros (bench_grid) / NULL (null-bench_grid) / PyTorch's TF32 module, three rotating rounds,
# graphed training µs an example.
#   results/2026-11-26-h100-no-zero-state/null.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--loss sum --input-grad --reps 10 --warmup 3"
one() {  # who cell shape
  case $1 in
    zeros) "$D/bench_grid" --no-loop --graph $how --api direct --phase train --mode $2 --shape $3 --variants op-tf32-default 2>&1 | grep -E '^\| (Lstm|Gru) ' | cut -d'|' -f8 ;;
    null) "$D/null-bench_grid" --no-loop --graph $how --api direct --phase train --mode $2 --shape $3 --variants op-tf32-default 2>&1 | grep -E '^\| (Lstm|Gru) ' | cut -d'|' -f8 ;;
    torch) python3 scripts/torch_reference.py --grid --graph $how --only $2,$3 --impls torch-tf32 2>&1 | grep -E '^\| (lstm|gru) ' | cut -d'|' -f8 ;;
  esac | tr -d ' '
}
for c in gru:3,128,200,1024 lstm:3,128,200,1024 gru:3,128,30,1024 lstm:3,128,30,1024; do
  IFS=: read -r cell shape <<< "$c"
  stamp "$cell [$shape] TF32"
  for order in "zeros null torch" "null torch zeros" "torch zeros null"; do
    line=""
    for who in $order; do line="$line $who $(one $who $cell $shape)"; done
    echo "  $line"
  done
done | tee "$OUT/null-tf32.txt"
stamp done
