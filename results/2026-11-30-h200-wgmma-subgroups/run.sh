#!/usr/bin/env bash
# On the GPU machine, the wgmma forward with two subgroups of 32 samples a block
# (CANDLE_RNN_PERSISTENT_WGMMA_SUB=2: batch groups of 64 on half the blocks; DIR built as
# scripts/devbin.sh builds it), in one command:
#   1. with the knob, the wgmma GPU test (its [3, 128, 2 x 512] cases, inference and training,
#      every output and gradient against f64) and the persistent dropout test (OUT/tests-*.log);
#   2. compute-sanitizer memcheck, racecheck and synccheck on a training call and an inference
#      forward at [4, 128, 512] with the knob, LSTM and GRU (OUT/sanitize.log);
#   3. graphed training (with the input's gradient) and the forward, µs an example, one subgroup /
#      two / one, at [30, 128, 512], [30, 128, 3 x 512] and [200, 128, 3 x 512], LSTM and GRU
#      (OUT/ab.log): whether a step on 32 blocks keeps the pace of one on 64.
#   results/2026-11-30-h200-wgmma-subgroups/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "tests with two subgroups"
CANDLE_RNN_PERSISTENT_WGMMA_SUB=2 CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 gpu_tests_as sub2 persistent_wgmma \
  dropout_gradients_use_the_forward_masks_on_the_persistent --nocapture
grep -c "wgmma_subgroups: 2" "$OUT/tests-sub2.log"
stamp "sanitize"
for phase in train forward; do
  (OUT=$OUT/$phase; mkdir -p "$OUT"
   CANDLE_RNN_PERSISTENT_WGMMA_SUB=2 sanitize_bench "lstm:1,128,4,512 gru:1,128,4,512" \
     op-bf16-default --phase $phase --input-grad)
done
stamp "ab"
graph=--graph
for spec in op-bf16-default:lstm:1,128,30,512 op-bf16-default:gru:1,128,30,512 \
  op-f16-default:lstm:3,128,30,512 op-bf16-default:gru:3,128,30,512 \
  op-bf16-default:lstm:3,128,200,512 op-bf16-default:gru:3,128,200,512; do
  split_spec "$spec"
  echo "$v $c $sh | one $(bench_with X=1) | two $(bench_with CANDLE_RNN_PERSISTENT_WGMMA_SUB=2) | one $(bench_with X=1) | two $(bench_with CANDLE_RNN_PERSISTENT_WGMMA_SUB=2)"
done 2>&1 | tee "$OUT/ab.log"
stamp done
