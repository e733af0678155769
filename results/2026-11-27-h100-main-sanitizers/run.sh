#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh at main: the op's GPU tests, gpu_check
# --persistent, then compute-sanitizer's synccheck and racecheck on the multicast forward's GPU
# test (its batch-40 case has two chunks), with room for the mbarriers synccheck tracks.
#   results/2026-11-27-h100-main-sanitizers/run.sh DIR OUT checks|racecheck
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
sanitize() {  # tool seconds extra-args
  stamp "$1"
  RNN_TEST_REQUIRE_GPU=1 timeout "$2" "$CS" --tool "$1" ${3:-} "$D/op-gpu-tests" --test-threads=1 \
    persistent_multicast_forward > "$OUT/sanitizer-$1.log" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result|Hazard|kernel" "$OUT/sanitizer-$1.log" \
    | sort | uniq -c | sort -rn | head -12
}
if [ "$PART" = checks ]; then
  stamp "GPU tests"
  RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/tests.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests.log" | head
  stamp "gpu_check --persistent"
  timeout 150 "$D/gpu_check" --persistent --seed 2711 > "$OUT/gpu_check.log" 2>&1
  echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"; grep -E '\| (FAIL|fail)' "$OUT/gpu_check.log" | head
  sanitize synccheck 220 "--num-cuda-barriers 64"
else
  sanitize racecheck 560
fi
stamp done
