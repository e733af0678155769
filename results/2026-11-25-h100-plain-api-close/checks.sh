#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old 757b4b8` (757b4b8: before the
# persistent kernels were sized by the cell's gate count): the op's GPU tests (two new ones);
# PTB large and medium bf16's first epoch, new and old binaries (the LSTM-as-a-cell refactor
# must print the same lines); compute-sanitizer over the plain API's call path (the final-state
# op, the persistent backward's state-gradient buffer, Auto's graph-captured trials) at small
# shapes, and racecheck over the persistent kernels.
#   results/2026-11-25-h100-plain-api-close/checks.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 150 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/op-gpu-tests.log" 2>&1
echo "op-gpu-tests rc=$?"; grep -E "test result|FAILED|panicked" "$OUT/op-gpu-tests.log" | head -5
for c in large medium; do
  for b in ptb-lm old-ptb-lm; do
    stamp "PTB $c bf16 epoch 1 ($b)"
    timeout 100 "$D/$b" train --config $c --precision bf16 --epochs 1 --out /tmp/$c-$b > "$OUT/$c-epoch1-$b.log" 2> "$OUT/$c-epoch1-$b.err"; echo "rc=$?"
    grep -E "^Epoch" "$OUT/$c-epoch1-$b.log"
  done
done
stamp "compute-sanitizer"
for tool in memcheck synccheck; do
  RNN_TEST_REQUIRE_GPU=1 timeout 150 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 plain_api > "$OUT/cs-$tool-plain-api.log" 2>&1
  echo "$tool plain_api rc=$?"; grep -E "ERROR SUMMARY|test result" "$OUT/cs-$tool-plain-api.log" | tail -2
  timeout 100 "$CS" --tool $tool "$D/bench_grid" --no-loop --graph --loss sum --input-grad --api direct --reps 1 --warmup 1 --phase train --mode lstm --shape 1,8,6,64 --variants op-f16-auto,op-tf32-auto > "$OUT/cs-$tool-auto.log" 2>&1
  echo "$tool auto rc=$?"; grep -E "ERROR SUMMARY" "$OUT/cs-$tool-auto.log" | tail -1
done
# Racecheck over the persistent kernels (clusters at hidden 256 and 1024), and over the old
# binaries' at hidden 256 (before the cluster barrier ahead of the first remote store).
for sb in 1,8,6,256:bench_grid 2,4,5,1024:bench_grid 1,8,6,256:old-bench_grid; do
  s=${sb%%:*} b=${sb##*:}
  timeout 120 "$CS" --tool racecheck --racecheck-report hazard --print-limit 100 "$D/$b" --no-loop --loss sum --input-grad --api direct --reps 1 --warmup 0 --phase train --mode lstm --shape $s --variants op-bf16-persistent > "$OUT/cs-racecheck-$s-$b.log" 2>&1
  echo "racecheck $s $b rc=$?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY" "$OUT/cs-racecheck-$s-$b.log" | tail -2
  grep -oE "(Error|Warning): Race reported .{0,80}|in .{0,60}lstm_persistent_[a-z]+" "$OUT/cs-racecheck-$s-$b.log" | sort | uniq -c | sort -rn | head -4
done
stamp done
