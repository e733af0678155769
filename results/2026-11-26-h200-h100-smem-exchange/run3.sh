#!/usr/bin/env bash
# On the GPU machine, DIR's binaries of branch prefetch (main plus the loads a step ahead, no
# exchange in shared memory): the op's GPU tests, gpu_check --persistent with the defaults,
# compute-sanitizer over training calls on the grid
# barrier, in one cluster and as a wavefront.
#   results/2026-11-26-h200-h100-smem-exchange/run3.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
for one in default; do
  stamp "gpu_check --persistent, one cluster: $one"
  env $([ $one = 1 ] && echo CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1) timeout 280 "$D/gpu_check" --persistent > "$OUT/persistent-$one.log" 2>&1
  echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent-$one.log") failed $(grep -c '| FAIL' "$OUT/persistent-$one.log")"
  grep -E "\| FAIL|panick|^Error" "$OUT/persistent-$one.log" | head -5 | cut -c1-300
done
stamp "compute-sanitizer"
for spec in gru:1:1,8,6,256 lstm:0:1,32,5,128 gru:0:2,8,6,256 lstm:0:2,8,6,256; do
  IFS=: read -r cell one shape <<< "$spec"
  for tool in memcheck synccheck racecheck; do
    log="$OUT/cs-$tool-$cell-${shape//,/x}-$one.log"
    CANDLE_RNN_PERSISTENT_ONE_CLUSTER=$one timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum --input-grad \
      --api direct --reps 2 --warmup 0 --phase train --mode $cell --shape $shape \
      --variants op-bf16-persistent > "$log" 2>&1
    echo "$tool $cell $shape (one cluster $one) rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
  done
done
(cd "$OUT" && tar -czf checks3.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
