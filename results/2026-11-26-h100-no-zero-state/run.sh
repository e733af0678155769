#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR with DIR/old-bench_grid.xz (0f5d078, a
# zero initial state allocated and filled per call, and on the crate's kernels the final state's
# gradient too): (1) the op's GPU tests; (2) compute-sanitizer memcheck over the new test's
# calls (null initial state and null final-state gradient on cuDNN and the crate's kernels);
# (3) graphed training and forwards, old / new / old / new, on shapes of both kernel paths; (4)
# one replayed training call of the new build traced node by node.
#   results/2026-11-26-h100-no-zero-state/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/gpu-tests.log" | head
grep -E "no state vs zeros" "$OUT/gpu-tests.log" | head -12 | cut -c1-200
stamp "memcheck over the new test"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$CS" --tool memcheck --leak-check no "$D/op-gpu-tests" a_call_given_no_state --test-threads=1 > "$OUT/memcheck.log" 2>&1
echo "rc=$?"; grep -E "ERROR SUMMARY|test result" "$OUT/memcheck.log" | head -3
how="--no-loop --graph --loss sum --input-grad --api direct --reps 20 --warmup 5"
for c in gru:1,32,30,512:op-bf16-default gru:1,32,30,128:op-f16-default lstm:1,32,30,1024:op-f16-default \
         lstm:2,20,35,1500:op-bf16-default gru:3,128,30,512:op-bf16-default lstm:3,128,200,512:op-f16-default \
         lstm:3,128,30,1024:op-tf32-default gru:1,128,30,512:op-bf16-default; do
  IFS=: read -r cell shape v <<< "$c"
  line=""
  for who in old new old new; do
    b=$D/bench_grid; [ $who = old ] && b=$D/old-bench_grid
    r=$("$b" $how --mode $cell --shape $shape --variants $v 2>&1 | grep -E '^\| (Lstm|Gru) ' | cut -d'|' -f7-9 | tr -s ' ')
    line="$line | $who $r"
  done
  echo "$cell [$shape] $v$line"
done | tee "$OUT/timings.txt"
stamp "trace: GRU [30, 32, 512] bf16, new"
CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/trace.csv timeout 60 \
  "$D/bench_grid" --no-loop --graph --loss sum --input-grad --reps 20 --warmup 5 --api direct \
  --mode gru --shape 1,32,30,512 --variants op-bf16-default > "$OUT/trace.log" 2>&1
python3 results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/trace.csv" 5 > "$OUT/trace_gru_512.txt"; rm -f "$OUT/trace.csv"
grep -A14 "^graph 2" "$OUT/trace_gru_512.txt" | cut -c1-110
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude timings.txt --exclude 'trace_*.txt' ./* && find . -type f ! -name all.tgz ! -name timings.txt ! -name 'trace_*.txt' -delete)
stamp done
