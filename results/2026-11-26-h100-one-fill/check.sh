#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old REV`: the backward's exchange
# buffers zeroed by the forward's fill (one fill a training call on the crate's kernels instead
# of one a pass). The op's GPU tests; `gpu_check --persistent` (every row of the crate's kernels
# against f64 and cuDNN: layer by layer, wavefronts, clusters, one cluster, batches in chunks,
# dropout); compute-sanitizer memcheck over the GPU test of calls given no state (the kernels'
# backward in one layer and a stack, one step and nine).
#   results/2026-11-26-h100-one-fill/check.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/gpu-tests.log" | head
stamp "gpu_check --persistent"
timeout 280 "$D/gpu_check" --persistent > "$OUT/persistent.log" 2>&1
echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent.log") failed $(grep -c '| FAIL' "$OUT/persistent.log")"
grep -E "\| FAIL|panick|^Error" "$OUT/persistent.log" | head -8 | cut -c1-300
stamp "memcheck"
RNN_TEST_REQUIRE_GPU=1 timeout 100 "$CS" --tool memcheck "$D/op-gpu-tests" a_call_given_no_state --test-threads=1 \
  > "$OUT/memcheck.log" 2>&1
echo "rc=$?"; grep -E "ERROR SUMMARY|^test result" "$OUT/memcheck.log" | head -3
(cd "$OUT" && tar -czf check.tgz --exclude '*.tgz' ./* && find . -type f ! -name '*.tgz' -delete)
stamp done
