#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: issue 32's other checks on the grid,
# graphed training calls. (1) The plain API's cost: the default through
# candle_cudnn_rnn::backward (`--api direct`) and through the weight-gradient sink
# (`sink-overwrite`) in TF32, fp32 and bf16, passes direct / sink / sink / direct. (2) The
# default beside RnnAlgo::Auto in TF32 and f16, twice (Auto's pick the same in both runs?).
# (3) The two long TF32 shapes, ours against PyTorch's TF32 module in four rotating rounds.
# PART (comma-separated) picks among api, auto and long (one command each on the H100).
#   PART=... results/2026-11-26-h100-plain-api-grid/checks.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
R="--reps 6 --warmup 2"
V=op-tf32-default,op-fp32-default,op-bf16-default
op() { timeout 150 "$D/bench_grid" --no-loop --graph --loss sum --input-grad $R --phase train --variants $V --api $2 --json "$OUT/api_$1.json" > "$OUT/api_$1.log" 2>&1; echo "api $1 rc=$?"; }
for p in ${PART//,/ }; do case $p in
api)
stamp "direct, sink, sink, direct"
op direct_a direct; op sink_a sink-overwrite; op sink_b sink-overwrite; op direct_b direct ;;
auto)
for run in a b; do
  stamp "default beside Auto, run $run"
  timeout 150 "$D/bench_grid" --no-loop --graph --loss sum --input-grad --api direct --reps 5 --warmup 3 --phase train \
    --variants op-tf32-default,op-tf32-auto,op-f16-default,op-f16-auto --json "$OUT/auto_$run.json" > "$OUT/auto_$run.log" 2>&1
  echo "auto $run rc=$?"
done ;;
long)
how="--loss sum --input-grad --reps 10 --warmup 3"
one() {  # who cell shape log
  case $1 in
    op) "$D/bench_grid" --no-loop --graph $how --api direct --mode $2 --shape $3 --variants op-tf32-default > "$4" 2>&1 ;;
    torch) python3 scripts/torch_reference.py --grid --graph $how --only $2,$3 --impls torch-tf32 > "$4" 2>&1 ;;
  esac
  grep -E '^\| (lstm|gru|Lstm|Gru) ' "$4" | cut -d'|' -f8 | head -1 | tr -d ' '
}
for cell in gru lstm; do
  stamp "$cell [200, 128, 3 x 1024] TF32, train µs an example"
  for order in "op torch" "torch op" "op torch" "torch op"; do
    line=""
    for who in $order; do line="$line $who $(one $who $cell 3,128,200,1024 "$OUT/long_${cell}_$who.log")"; done
    echo "  $line"
  done
done ;;
esac; done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz ./* && find . -type f ! -name all.tgz -delete)
stamp "done"
