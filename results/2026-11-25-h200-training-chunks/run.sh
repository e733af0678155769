#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old main` on branch chunks-next
# (training batches up to 256 on the persistent kernels, the backward in chunks of 32; the
# forward's clusters over chunked batches). Part `tests`: the persistent GPU tests (training
# at batches 96-256 new); compute-sanitizer over a training call of three chunks (backward
# clusters 1 and 2) and a forward of three chunks in forward clusters of 2; the chunked
# inference tests with forward clusters of 2 and 4; the half-precision grid with the kernels
# named (op-bf16-persistent) beside the default and PyTorch's fp16 module. Part `check`:
# gpu_check --persistent (training rows to batch 256), and persistent-gpu.sh's chunks timings.
#   results/2026-11-25-h200-training-chunks/run.sh tests|check DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
part=$1 D=$2 OUT=$3
source scripts/on-gpu.sh
if [ "$part" = tests ]; then
  stamp "persistent GPU tests"
  RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --nocapture --test-threads=1 persistent > "$OUT/op-gpu-tests.log" 2>&1
  echo "op-gpu-tests rc=$? $(grep -E 'test result' "$OUT/op-gpu-tests.log" | tail -1)"
  grep -E "FAILED|panicked|failed:" "$OUT/op-gpu-tests.log" | head -8 | cut -c1-300
  stamp "compute-sanitizer: training [4, 77, 1 x 200] (three chunks)"
  for cell in lstm gru; do for cl in 1 2; do for tool in memcheck racecheck synccheck; do
    log="$OUT/cs-$tool-$cell-train-cl$cl.log"
    CANDLE_RNN_PERSISTENT_CLUSTER=1,$cl timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" \
      --no-loop --loss sum --input-grad --api direct --reps 1 --warmup 0 --phase train --mode $cell \
      --shape 1,77,4,200 --variants op-bf16-persistent > "$log" 2>&1
    echo "$tool $cell train cl$cl rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//');" \
      "served by ours: $(grep -c '(Persistent)' "$log")"
  done; done; done
  stamp "compute-sanitizer: forward [4, 77, 1 x 200] in forward clusters of 2"
  for cell in lstm gru; do for tool in memcheck racecheck synccheck; do
    log="$OUT/cs-$tool-$cell-fwd-cl2.log"
    CANDLE_RNN_PERSISTENT_CLUSTER=2,1 timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" \
      --no-loop --reps 1 --warmup 0 --phase forward --mode $cell --shape 1,77,4,200 \
      --variants op-bf16-persistent > "$log" 2>&1
    echo "$tool $cell fwd cl2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//');" \
      "served by ours: $(grep -c '(Persistent)' "$log")"
  done; done
  for cl in 2 4; do
    stamp "chunked inference GPU tests, forward clusters of $cl"
    CANDLE_RNN_PERSISTENT_CLUSTER=$cl,2 RNN_TEST_REQUIRE_GPU=1 timeout 150 "$D/op-gpu-tests" --nocapture \
      --test-threads=1 inference_in_chunks > "$OUT/chunks-tests-cl$cl.log" 2>&1
    echo "cl$cl rc=$? $(grep -E 'test result' "$OUT/chunks-tests-cl$cl.log" | tail -1)"
    grep -E "FAILED|panicked|failed:" "$OUT/chunks-tests-cl$cl.log" | head -4 | cut -c1-300
  done
  stamp "half-precision grid: the kernels named, the default, PyTorch's fp16"
  COMPARE_IMPLS=torch-fp16 timeout 400 scripts/compare-grid.sh "$D/bench_grid" "$OUT/grid" 10 3 \
    --variants op-bf16-persistent,op-bf16-default,op-f16-default > "$OUT/grid.log" 2>&1
  echo "compare-grid rc=$?"
  tail -n 80 "$OUT/grid/table.md" 2>/dev/null | grep -E "geo|lose|worst|half" | head -20
else
  stamp "gpu_check --persistent"
  timeout 280 "$D/gpu_check" --persistent > "$OUT/persistent.log" 2>&1
  echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent.log") failed $(grep -c '| FAIL' "$OUT/persistent.log")"
  grep -E "\| FAIL|panick|^Error" "$OUT/persistent.log" | head -8 | cut -c1-300
  scripts/persistent-gpu.sh chunks "$D" "$OUT/chunks" 2>&1 | grep -v "^\s*$"
fi
(cd "$OUT" && tar -czf all-$part.tgz --exclude 'all*.tgz' --exclude console.txt ./* && find . -type f ! -name 'all*.tgz' ! -name console.txt -delete)
stamp "done"
