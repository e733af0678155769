#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old main` on branch fewer-fills (the
# persistent kernels' barrier counter and the op's own weight-gradient buffer no longer zero
# filled): the op's GPU tests and gpu_check --persistent (every gradient against f64: an element
# left unwritten would show); then graphed training calls through candle_cudnn_rnn::backward
# (the op's own gradient buffer), bf16 on the kernels, old / new / old / new.
#   results/2026-11-26-h200-fewer-fills/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/op-gpu-tests.log" 2>&1
echo "op-gpu-tests rc=$? $(grep -E 'test result' "$OUT/op-gpu-tests.log" | tail -1)"
grep -E "FAILED|panicked|failed:" "$OUT/op-gpu-tests.log" | head -8 | cut -c1-300
stamp "gpu_check --persistent"
timeout 280 "$D/gpu_check" --persistent > "$OUT/persistent.log" 2>&1
echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent.log") failed $(grep -c '| FAIL' "$OUT/persistent.log")"
grep -E "\| FAIL|panick|^Error" "$OUT/persistent.log" | head -8 | cut -c1-300
stamp "graphed training, µs an example: old / new / old / new"
for r in 1 2; do for b in old-bench_grid bench_grid; do
  for s in lstm:1,32,30,512 lstm:1,32,30,1024 gru:1,32,30,1024 lstm:2,20,35,1500; do
    IFS=: read -r cell shape <<< "$s"
    echo -n "$b.$r $cell $shape: "
    timeout 60 "$D/$b" --no-loop --graph --loss sum --input-grad --api direct --reps 30 --warmup 10 \
      --mode $cell --shape $shape --variants op-bf16-persistent --json "$OUT/${b}_${r}_${cell}_$shape.json" 2>&1 \
      | grep -E "^\| (Lstm|Gru)" | cut -d'|' -f7,8
  done
done; done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
