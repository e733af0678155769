#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR at the final change (cuDNN's Standard
# stacks read zeros of the backend's own, everything else a null state) with
# DIR/old-bench_grid.xz at 0f5d078: the op's GPU tests, memcheck over the new test, and graphed
# training / forwards old / new / old / new on the shapes run.sh and gru3.sh timed.
#   results/2026-11-26-h100-no-zero-state/check.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/gpu-tests.log" | head
grep -E "no state vs zeros" "$OUT/gpu-tests.log" | grep -c "0.0e0 (<= 1e-6), state 0.0e0 (<= 1e-6), dx 0.0e0 (<= 1e-6), dw 0.0e0"
stamp "memcheck over the new test"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$CS" --tool memcheck --leak-check no "$D/op-gpu-tests" a_call_given_no_state --test-threads=1 > "$OUT/memcheck.log" 2>&1
echo "rc=$?"; grep -E "ERROR SUMMARY|test result" "$OUT/memcheck.log" | head -3
how="--no-loop --graph --loss sum --input-grad --api direct --reps 20 --warmup 5"
for c in gru:3,128,30,1024:op-bf16-default gru:3,128,200,1024:op-bf16-default gru:1,32,30,512:op-bf16-default \
         gru:1,32,30,128:op-f16-default lstm:2,20,35,1500:op-bf16-default lstm:3,128,200,512:op-f16-default \
         lstm:3,128,30,1024:op-tf32-default gru:1,128,30,512:op-bf16-default; do
  IFS=: read -r cell shape v <<< "$c"
  line=""
  for who in old new old new; do
    b=$D/bench_grid; [ $who = old ] && b=$D/old-bench_grid
    r=$("$b" $how --mode $cell --shape $shape --variants $v 2>&1 | grep -E '^\| (Lstm|Gru) ' | cut -d'|' -f8-9 | tr -s ' ')
    line="$line | $who $r"
  done
  echo "$cell [$shape] $v$line"
done | tee "$OUT/final-timings.txt"
(cd "$OUT" && tar -czf check.tgz --exclude final-timings.txt ./* && find . -type f ! -name check.tgz ! -name final-timings.txt -delete)
stamp done
