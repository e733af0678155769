#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR at the gpu_check GRU rows' commit: the
# GPU tests (the default now serves a bf16 GRU on the crate's kernels), then gpu_check
# --persistent (every persistent row, LSTM and GRU: against f64 with cuDNN's errors beside,
# Auto, dropout masks and finite differences, the weight-gradient sinks).
#   results/2026-11-25-h100-gru-check/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 150 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/op-gpu-tests.log" 2>&1
echo "op-gpu-tests rc=$?"; grep -E "test result|FAILED|panicked|served by" "$OUT/op-gpu-tests.log" | head -8
stamp "gpu_check --persistent"
timeout 400 "$D/gpu_check" --persistent --json "$OUT/gpu_check.json" > "$OUT/gpu_check.log" 2>&1
echo "gpu_check rc=$?"; grep -c "| ok |" "$OUT/gpu_check.log"; grep -E "FAIL|passed|failed" "$OUT/gpu_check.log" | head -10
stamp done
