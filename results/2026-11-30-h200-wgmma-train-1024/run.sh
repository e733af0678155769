#!/usr/bin/env bash
# On the GPU machine, the training forward on wgmma for one layer of 1024 at batch 128 by default
# (`shape_wgmma_training`; DIR built as scripts/devbin.sh builds it), in one command:
#   1. the GPU tests that name the rules' kernels (captured::, the default's, the wgmma test;
#      OUT/tests.log);
#   2. training (with the input's gradient) and the forward, µs an example, rule /
#      CANDLE_RNN_PERSISTENT_WGMMA=0 (cuDNN's `Standard` trains) / rule at [30, 128, 1024],
#      graphed and eager, LSTM and GRU in bf16, then graphed through `loss.backward()`
#      (bench_grid --api plain) (OUT/ab.log);
#   3. memcheck, racecheck and synccheck on a training call at [4, 128, 1024] by the rule, LSTM
#      (its training variant spills 32 bytes) and GRU (OUT/sanitize.log, OUT/sanitize.tgz).
#   results/2026-11-30-h200-wgmma-train-1024/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp tests
RNN_TEST_REQUIRE_GPU=1 timeout 300 "$D/op-gpu-tests" --test-threads=1 captured:: \
  the_default_serves persistent_wgmma > "$OUT/tests.log" 2>&1
echo "tests rc=$? $(grep -E '^test result' "$OUT/tests.log")"
grep -E "FAILED|panicked|failed:" "$OUT/tests.log" | head -5
stamp ab
for graph in --graph ""; do
  for c in lstm gru; do
    v=op-bf16-default sh=1,128,30,1024
    echo "${graph:-eager} $c $sh | rule $(bench_with X=1) | off $(bench_with CANDLE_RNN_PERSISTENT_WGMMA=0) | rule $(bench_with X=1)"
  done
done 2>&1 | tee "$OUT/ab.log"
graph=--graph
for c in lstm gru; do
  v=op-bf16-default sh=1,128,30,1024
  echo "plain $c $sh | rule $(API=plain bench_with X=1) | off $(API=plain bench_with CANDLE_RNN_PERSISTENT_WGMMA=0) | rule $(API=plain bench_with X=1)"
done 2>&1 | tee -a "$OUT/ab.log"
stamp sanitize
SAN_TIMEOUT=80 sanitize_bench "lstm:1,128,4,1024 gru:1,128,4,1024" op-bf16-default --phase train --input-grad
stamp done
