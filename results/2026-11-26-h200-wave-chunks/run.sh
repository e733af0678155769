#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` with wavefronts past batch 32 (the
# batch in chunks of 32, one after another within each wave step):
# 1. the op's GPU tests (two layers at batch 77 now a wavefront in three chunks);
# 2. gpu_check --persistent (its stacks at batch 77 now wavefronts);
# 3. compute-sanitizer memcheck, synccheck, racecheck over LSTM and GRU bf16 training as a
#    wavefront in chunks: [2, 77, 4, 200] and [3, 64, 3, 128];
# 4. stacks past batch 32, graphed, µs an example, train | forward: bf16 on the crate's kernels
#    as a wavefront (`persistent`) and layer by layer (CANDLE_RNN_PERSISTENT_WAVE=0), the op's
#    bf16 and f16 defaults (cuDNN in training there), PyTorch's fp16 module.
#   results/2026-11-26-h200-wave-chunks/run.sh DIR OUT check   (1, 2)
#   results/2026-11-26-h200-wave-chunks/run.sh DIR OUT bench   (3, 4)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
if [ "$PART" = check ]; then
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
grep -E "FAILED|panicked" "$OUT/gpu-tests.log" | head -8 | cut -c1-300
stamp "gpu_check --persistent"
timeout 300 "$D/gpu_check" --persistent > "$OUT/persistent.log" 2>&1
echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent.log") failed $(grep -c '| FAIL' "$OUT/persistent.log"); $(tail -1 "$OUT/persistent.log")"
grep -E "\| FAIL|panick|^Error" "$OUT/persistent.log" | head -5 | cut -c1-300
grep -E "L2 B77 T12 I96 H200 bf16 training \(" "$OUT/persistent.log" | cut -c1-260
fi
if [ "$PART" = bench ]; then
stamp "compute-sanitizer"
for shape in 2,77,4,200 3,64,3,128; do for mode in lstm gru; do for tool in memcheck synccheck racecheck; do
  log="$OUT/cs-$tool-$mode-${shape//,/x}.log"
  timeout 120 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum \
    --input-grad --api direct --reps 2 --warmup 0 --phase train --mode $mode --shape $shape \
    --variants op-bf16-persistent > "$log" 2>&1
  echo "$tool $mode $shape rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
done; done; done
stamp "stacks past batch 32, graphed, µs an example, train | forward"
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --api direct"
for c in lstm:3,128,30,512 gru:3,128,30,512 lstm:3,128,200,512 gru:3,128,200,512 lstm:3,64,30,512 \
  gru:3,64,30,512 lstm:2,64,35,650 lstm:2,128,30,256; do
  IFS=: read -r mode shape <<< "$c"
  IFS=, read -r L B T H <<< "$shape"
  f="$OUT/t_${mode}_${shape//,/x}"
  "$D/bench_grid" $how --variants op-bf16-persistent,op-bf16-default,op-f16-default --mode $mode --shape $shape > "$f.log" 2>&1
  CANDLE_RNN_PERSISTENT_WAVE=0 "$D/bench_grid" $how --variants op-bf16-persistent --mode $mode --shape $shape > "$f-layer.log" 2>&1
  /opt/torch/.venv/bin/python scripts/torch_reference.py --grid --graph --loss sum --input-grad \
    --impls torch-fp16 --reps 10 --only $mode,$L,$B,$T,$H > "$f-torch.log" 2>&1
  echo "  $mode $shape: $(grep -E '^\| (Lstm|Gru) ' "$f.log" | cut -d'|' -f7,8,9 | tr -s ' ' | paste -sd';'); layer by layer: $(grep -E '^\| (Lstm|Gru) ' "$f-layer.log" | cut -d'|' -f8,9 | tr -s ' '); torch fp16: $(grep -E "^\| $mode " "$f-torch.log" | head -1 | cut -d'|' -f8,9 | tr -s ' ')"
done
fi
(cd "$OUT" && tar -czf $PART.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
