#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old 46d58bf` with the GRU's
# wavefront (recurrence_fwd.cu's UPPER_GROUPS, recurrence_bwd.cu's XGH):
# 1. the op's GPU tests, and PTB medium and small bf16 first epochs (LSTM wavefronts) from the
#    new and the old ptb-lm (the same lines: the LSTM's kernels unchanged);
# 2. gpu_check --persistent (GRU stacks now as wavefronts);
# 3. compute-sanitizer memcheck, synccheck, racecheck over GRU bf16 training as a wavefront:
#    two layers at [6, 8, 256], three at [5, 4, 64];
# (bench.sh times it.)
#   results/2026-11-26-h200-gru-wavefront/check.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
grep -E "FAILED|panicked" "$OUT/gpu-tests.log" | head -5
for c in medium small; do
  for b in ptb-lm old-ptb-lm; do
    timeout 100 "$D/$b" train --config $c --precision bf16 --epochs 1 --out "/tmp/$c-$b" > "$OUT/$c-epoch1-$b.log" 2>&1
    echo "$c $b rc=$? $(grep -E '^Epoch' "$OUT/$c-epoch1-$b.log" | sed 's/ wps: [0-9]*//')"
  done
done
stamp "gpu_check --persistent"
timeout 280 "$D/gpu_check" --persistent > "$OUT/persistent.log" 2>&1
echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent.log") failed $(grep -c '| FAIL' "$OUT/persistent.log"); $(tail -1 "$OUT/persistent.log")"
grep -E "\| FAIL|panick|^Error" "$OUT/persistent.log" | head -5 | cut -c1-300
grep -E "GRU L[23]" "$OUT/persistent.log" | head -40 | cut -c1-240
stamp "compute-sanitizer"
for shape in 2,8,6,256 3,4,5,64; do for tool in memcheck synccheck racecheck; do
  log="$OUT/cs-$tool-gru-${shape//,/x}.log"
  timeout 120 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum --input-grad \
    --api direct --reps 2 --warmup 0 --phase train --mode gru --shape $shape \
    --variants op-bf16-persistent > "$log" 2>&1
  echo "$tool gru $shape rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
done; done
(cd "$OUT" && tar -czf check.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
