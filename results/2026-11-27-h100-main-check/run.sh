#!/usr/bin/env bash
# On the GPU machine, binaries of main: `gpu_check --persistent` (the crate's kernels against the
# f64 CPU reference and cuDNN, every row), then the GPU tests, after the grid barrier's spaced
# polls (64d418f) whose landing ran the GPU tests and sanitizers but not gpu_check.
#   results/2026-11-27-h100-main-check/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
stamp "gpu_check --persistent"
timeout 420 "$D/gpu_check" --persistent --seed 2711 > "$OUT/gpu_check.txt" 2>&1
echo "rc=$? rows ok: $(grep -c '| ok |' "$OUT/gpu_check.txt") FAIL: $(grep -c 'FAIL' "$OUT/gpu_check.txt")"
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 170 "$D/op-gpu-tests" --test-threads=1 > "$OUT/tests.log" 2>&1
echo "rc=$?"; grep -E "^test result" "$OUT/tests.log"
stamp done
