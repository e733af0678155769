#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at main (the barrier in a 128-byte line
# of its own behind the exchange buffer; bench_grid's forward on a detached input):
# 1. the op's GPU tests, gpu_check --persistent, compute-sanitizer memcheck and racecheck on
#    three training calls on the crate's kernels;
# 2. eager inference forwards (bench_grid --phase forward, no --input-grad: the same calls as the
#    fixed harness's forward column) of f16 LSTMs at batch 128, the op's default against cuDNN's
#    f16 PersistStatic and Standard and bf16 on the crate's kernels, beside PyTorch's fp16 module:
#    does the f16 PersistStatic rule (batches up to 32) leave inference at batch 128 slower?
#   results/2026-11-26-h200-inference-forward/verify.sh DIR OUT
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
echo "rc=$? $(tail -1 "$OUT/persistent.log")"
stamp "compute-sanitizer"
for c in lstm:2,8,6,256 gru:2,8,6,256 lstm:1,77,4,200; do for tool in memcheck racecheck; do
  IFS=: read -r cell shape <<< "$c"
  log="$OUT/cs-$tool-$cell-${shape//,/x}.log"
  timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum --input-grad \
    --api direct --reps 2 --warmup 0 --phase train --mode $cell --shape $shape \
    --variants op-bf16-persistent > "$log" 2>&1
  echo "$tool $cell $shape rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
done; done
stamp "eager inference forwards, µs an example (op / PyTorch / op)"
for shape in 1,128,30,512 1,128,30,1024 1,64,30,512 3,128,30,512; do
  for who in op torch op; do
    case $who in
      op) "$D/bench_grid" --no-loop --phase forward --reps 20 --warmup 10 --mode lstm --shape $shape \
        --variants op-f16-default,op-f16-static,op-f16-standard,op-bf16-default > "$OUT/fwd_${shape}_$who.log" 2>&1
        echo "  $shape op: $(grep -E '^\| Lstm ' "$OUT/fwd_${shape}_$who.log" | cut -d'|' -f7,9 | tr '\n' ';' | tr -s ' ')" ;;
      torch) python3 scripts/torch_reference.py --grid --reps 20 --warmup 10 --only lstm,$shape --impls torch-fp16 > "$OUT/fwd_${shape}_$who.log" 2>&1
        echo "  $shape torch: $(grep -E '^\| lstm ' "$OUT/fwd_${shape}_$who.log" | cut -d'|' -f7,9 | tr -s ' ')" ;;
    esac
  done
done
(cd "$OUT" && tar -czf verify.tgz --exclude verify.tgz --exclude console.txt ./* && find . -type f ! -name verify.tgz ! -name console.txt -delete)
stamp "done"
