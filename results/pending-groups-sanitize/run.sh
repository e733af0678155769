#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR at main after the batch groups
# (results/2026-11-27-h100-batch-groups/): the new small GPU test of batch groups, then
# compute-sanitizer's memcheck, synccheck and racecheck on it (batch 64 in 2 groups, 96 in 3;
# LSTM and GRU, bf16 and f16). Rename this folder to its date and GPU once it has run.
#   results/pending-groups-sanitize/run.sh DIR OUT test|memcheck|synccheck|racecheck
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
filter=persistent_batch_groups
case $PART in
test)
  stamp "GPU test $filter"
  RNN_TEST_REQUIRE_GPU=1 timeout 300 "$D/op-gpu-tests" --test-threads=1 --nocapture $filter \
    > "$OUT/test.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/test.log" | head
  ;;
memcheck | synccheck | racecheck)
  extra=""
  [ "$PART" = synccheck ] && extra="--num-cuda-barriers 64"
  stamp "$PART"
  RNN_TEST_REQUIRE_GPU=1 timeout 560 "$CS" --tool "$PART" $extra "$D/op-gpu-tests" --test-threads=1 \
    $filter > "$OUT/sanitizer-$PART.log" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result|Hazard|kernel" "$OUT/sanitizer-$PART.log" \
    | sort | uniq -c | sort -rn | head -12
  ;;
esac
stamp done
