#!/usr/bin/env bash
# On the GPU machine, the new binaries of run3.sh's DIR: the op's GPU tests, gpu_check
# --persistent, compute-sanitizer (memcheck, synccheck, racecheck) over training calls whose
# blocks take 8 units.
#   results/2026-11-26-h100-block-units/run4.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
stamp "gpu_check --persistent"
timeout 280 "$D/gpu_check" --persistent > "$OUT/persistent.log" 2>&1
echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent.log") failed $(grep -c '| FAIL' "$OUT/persistent.log")"
grep -E "\| FAIL|panick|^Error" "$OUT/persistent.log" | head -5 | cut -c1-300
stamp "compute-sanitizer"
for spec in gru:1,8,6,96 lstm:1,32,5,128 gru:1,20,4,200 lstm:1,3,5,40; do
  IFS=: read -r cell shape <<< "$spec"
  for tool in memcheck synccheck racecheck; do
    log="$OUT/cs-$tool-$cell-${shape//,/x}.log"
    timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum --input-grad \
      --api direct --reps 2 --warmup 0 --phase train --mode $cell --shape $shape \
      --variants op-bf16-persistent > "$log" 2>&1
    echo "$tool $cell $shape rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
