#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` built with lanes.patch applied: the checks of the backward's weight
# and input gradients at once on three streams (`lanes.rs`): the op's GPU tests, and
# `gpu_check --persistent --seed 2611` with and without the lanes (CANDLE_RNN_PERSISTENT_LANES=0
# runs them one after another on candle's stream), whose tables should be the same: the same
# GEMMs on the same cases.
#   results/2026-11-26-h100-lanes/check.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/gpu-tests.log" | head
for lanes in 1 0; do
  stamp "gpu_check --persistent, lanes $lanes"
  CANDLE_RNN_PERSISTENT_LANES=$lanes timeout 300 "$D/gpu_check" --persistent --seed 2611 > "$OUT/persistent_$lanes.log" 2>&1
  echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent_$lanes.log") failed $(grep -c '| FAIL' "$OUT/persistent_$lanes.log")"
  grep -E "\| FAIL|panick|^Error" "$OUT/persistent_$lanes.log" | head -8 | cut -c1-300
done
# The tables' rows compared (the same cases: one seed).
rows() { grep -E '^\|' "$1"; }
if diff <(rows "$OUT/persistent_1.log") <(rows "$OUT/persistent_0.log") > "$OUT/persistent.diff"; then
  echo "gpu_check tables identical with and without lanes ($(rows "$OUT/persistent_1.log" | wc -l) lines)"
else
  echo "gpu_check tables differ: $(wc -l < "$OUT/persistent.diff") diff lines"; head -20 "$OUT/persistent.diff" | cut -c1-200
fi
(cd "$OUT" && tar -czf check.tgz --exclude '*.tgz' ./* && find . -type f ! -name '*.tgz' -delete)
stamp done
