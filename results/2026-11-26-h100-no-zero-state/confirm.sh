#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR at 1f63ad3 (cuDNN's TF32 LSTM stacks
# take a null initial state, other `Standard` stacks zeros): the op's GPU tests; then the TF32
# 3-layer hidden-1024 stacks, the op's default against PyTorch's TF32 module, two rounds.
#   results/2026-11-26-h100-no-zero-state/confirm.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/gpu-tests.log" | head
how="--loss sum --input-grad --reps 10 --warmup 3"
one() {  # who cell shape
  case $1 in
    op) "$D/bench_grid" --no-loop --graph $how --api direct --phase train --mode $2 --shape $3 --variants op-tf32-default 2>&1 | grep -E '^\| (Lstm|Gru) ' | cut -d'|' -f8 ;;
    torch) python3 scripts/torch_reference.py --grid --graph $how --only $2,$3 --impls torch-tf32 2>&1 | grep -E '^\| (lstm|gru) ' | cut -d'|' -f8 ;;
  esac | tr -d ' '
}
for c in lstm:3,128,200,1024 lstm:3,128,30,1024 gru:3,128,200,1024; do
  IFS=: read -r cell shape <<< "$c"
  for order in "op torch" "torch op"; do
    line=""
    for who in $order; do line="$line $who $(one $who $cell $shape)"; done
    echo "$cell [$shape] TF32: $line"
  done
done | tee "$OUT/confirm-tf32.txt"
(cd "$OUT" && tar -czf confirm.tgz --exclude confirm-tf32.txt ./* && find . -type f ! -name confirm.tgz ! -name confirm-tf32.txt -delete)
stamp done
