#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: every kernel that can serve a call
# (cuDNN's four algorithms, the crate's persistent kernels) timed on the benchmark grid and on
# the PTB-like LSTM shapes, graphed training calls (`--api direct`: the weight's gradient
# straight into candle's store, so that the comparison is of kernels) and eager forwards: the
# measurements behind `RnnAlgo::Heuristic`'s rules (candle-cudnn-rnn/src/choose.rs).
#   results/2026-11-25-h100-plain-api/sweep.sh DIR OUT NAME VARIANTS [TESTS]
# VARIANTS: bench_grid's --variants list; TESTS=1 runs the op's GPU tests first.
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2 NAME=$3 VARIANTS=$4 TESTS=${5:-0}
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/smi-$NAME.txt" 2>&1
if [ "$TESTS" = 1 ]; then
  stamp "op GPU tests"
  RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/op-gpu-tests.log" 2>&1
  echo "op-gpu-tests rc=$?"; grep -E "test result|FAILED|panicked|FAIL" "$OUT/op-gpu-tests.log" | head -8
fi
G="--no-loop --graph --loss sum --input-grad --api direct --reps 5 --warmup 3 --variants $VARIANTS"
stamp "grid, $VARIANTS"
timeout 420 "$D/bench_grid" $G --json "$OUT/$NAME-grid.json" > "$OUT/$NAME-grid.log" 2>&1
echo "grid rc=$?"; tail -2 "$OUT/$NAME-grid.log" | cut -c1-200
# LSTM shapes beside the grid where the crate's kernels may serve: PTB small, medium and large
# as ptb-lm calls them (large's test pass at batch 1 too), one layer, longer sequences, deeper
# stacks, small batches.
stamp "LSTM shapes beside the grid"
for s in 2,20,20,200 2,20,35,650 2,1,35,1500 1,20,35,1500 1,32,100,512 3,32,30,512 1,8,30,256 2,32,35,1024; do
  timeout 60 "$D/bench_grid" $G --mode lstm --shape $s --json "$OUT/$NAME-lstm-$s.json" >> "$OUT/$NAME-lstm.log" 2>&1 || echo "shape $s rc=$?"
done
stamp done
