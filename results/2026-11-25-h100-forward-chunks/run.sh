#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old e96f685` on branch batch-chunks
# (inference batches up to 128 on the persistent forward, in chunks of 32): the persistent GPU
# tests (batches 128 and 77 new); compute-sanitizer over a chunked forward; eager forwards at
# batch 128, the kernels (Persistent) against cuDNN's (default) and PyTorch's fp16 module,
# ours / PyTorch / ours; PTB large's shape on the old and the new binary (batches of one chunk
# must not slow down).
#   results/2026-11-25-h100-forward-chunks/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "persistent GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 120 "$D/op-gpu-tests" --nocapture --test-threads=1 persistent > "$OUT/op-gpu-tests.log" 2>&1
echo "op-gpu-tests rc=$? $(grep -E 'test result' "$OUT/op-gpu-tests.log" | tail -1)"
grep -E "FAILED|panicked|failed:|served by" "$OUT/op-gpu-tests.log" | head -8 | cut -c1-300
stamp "compute-sanitizer, a forward of three chunks"
for cell in lstm gru; do
  for tool in memcheck racecheck synccheck; do
    log="$OUT/cs-$tool-$cell.log"
    timeout 60 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --reps 1 --warmup 0 \
      --phase forward --mode $cell --shape 1,77,4,200 --variants op-bf16-persistent > "$log" 2>&1
    echo "$tool $cell rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//');" \
      "served by ours: $(grep -c '(Persistent)' "$log")"
  done
done
stamp "eager forwards, batch 128: ours / PyTorch / ours"
S="1,128,30,128 1,128,30,512 1,128,30,1024 3,128,30,1024"
op() {
  for s in $S; do for cell in lstm gru; do
    timeout 60 "$D/bench_grid" --no-loop --phase forward --reps 20 --warmup 5 --mode $cell --shape $s \
      --variants op-bf16-persistent,op-bf16-default,op-f16-persistent,op-f16-default --json "$OUT/$1-$cell-$s.json" 2>&1 \
      | grep -E "^\| (Lstm|Gru)" | cut -d'|' -f2-9
  done; done
}
op fwd_a
ONLY=""; for s in $S; do for cell in lstm gru; do ONLY="$ONLY --only $cell,${s}"; done; done
PYTHONUNBUFFERED=1 timeout 120 python3 scripts/torch_reference.py --grid --reps 20 --warmup 5 --impls torch-fp16 \
  $ONLY --json "$OUT/torch.json" > "$OUT/torch.log" 2>&1; echo "torch rc=$?"; grep -E "^\| (lstm|gru)" "$OUT/torch.log"
op fwd_b
stamp "PTB large's shape, graphed training and eager forward: old, new, old, new"
for b in old-bench_grid bench_grid old-bench_grid bench_grid; do
  echo -n "$b: "; timeout 60 "$D/$b" --no-loop --graph --loss sum --input-grad --api direct --reps 20 --warmup 5 \
    --mode lstm --shape 2,20,35,1500 --variants op-bf16-persistent 2>&1 | tail -n 1 | cut -d'|' -f7-9
done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
