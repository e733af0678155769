#!/usr/bin/env bash
# On the GPU machine, bench_grid of `scripts/devbin.sh DIR` at main (after fewer-fills):
# compute-sanitizer's memcheck, initcheck (reads of memory never written: the op's own weight
# gradient and the barrier counter are no longer zero filled), synccheck and racecheck over
# training calls on the crate's kernels through candle_cudnn_rnn::backward (the op's own
# gradient buffer), two layers at batch 8 and one at batch 77 (three chunks).
#   results/2026-11-26-h200-fewer-fills/sanitize.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
for cell in lstm gru; do for shape in 2,8,6,256 1,77,4,200; do for tool in memcheck initcheck synccheck racecheck; do
  log="$OUT/cs-$tool-$cell-${shape//,/x}.log"
  timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum --input-grad \
    --api direct --reps 1 --warmup 0 --phase train --mode $cell --shape $shape \
    --variants op-bf16-persistent > "$log" 2>&1
  echo "$tool $cell $shape rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//');" \
    "served by ours: $(grep -c '(Persistent)' "$log")"
done; done; done
(cd "$OUT" && tar -czf sanitize.tgz --exclude sanitize.tgz --exclude console.txt ./* && find . -type f ! -name sanitize.tgz ! -name console.txt -delete)
