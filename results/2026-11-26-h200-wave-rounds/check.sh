#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` with wave.rs taking wavefronts in
# more rounds than layer by layer where no fewer fit:
# 1. the op's GPU tests (stacks of 3 x 512 at batch 32 added: two rounds);
# 2. gpu_check --persistent ([3, 32, 12, 256 -> 512] added);
# 3. compute-sanitizer memcheck, synccheck, racecheck over LSTM and GRU bf16 training as a
#    wavefront in two rounds, forced small: [3, 32, 4, 128] with CANDLE_RNN_PERSISTENT_WAVE=12,12;
# 4. the default (`Heuristic`) in bf16 and f16 beside PyTorch's fp16 module, graphed, µs an
#    example, train | forward: the stacks that now run as wavefronts, and PTB medium's.
#   results/2026-11-26-h200-wave-rounds/check.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
grep -E "FAILED|panicked" "$OUT/gpu-tests.log" | head -8 | cut -c1-300
stamp "gpu_check --persistent"
timeout 300 "$D/gpu_check" --persistent > "$OUT/persistent.log" 2>&1
echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent.log") failed $(grep -c '| FAIL' "$OUT/persistent.log"); $(tail -1 "$OUT/persistent.log")"
grep -E "\| FAIL|panick|^Error" "$OUT/persistent.log" | head -5 | cut -c1-300
grep -E "L3 B32 T12 I256 H512 bf16 training \(" "$OUT/persistent.log" | cut -c1-260
stamp "compute-sanitizer"
for mode in lstm gru; do for tool in memcheck synccheck racecheck; do
  log="$OUT/cs-$tool-$mode.log"
  CANDLE_RNN_PERSISTENT_WAVE=12,12 timeout 120 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum \
    --input-grad --api direct --reps 2 --warmup 0 --phase train --mode $mode --shape 3,32,4,128 \
    --variants op-bf16-persistent > "$log" 2>&1
  echo "$tool $mode rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
done; done
stamp "the default, graphed, µs an example, train | forward"
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --api direct --variants op-bf16-default,op-f16-default"
for c in lstm:3,32,30,512 gru:3,32,30,512 lstm:3,32,200,512 gru:3,32,200,512 lstm:4,32,30,512 gru:4,32,30,512 \
  lstm:2,20,35,650 gru:2,20,35,650; do
  IFS=: read -r mode shape <<< "$c"
  IFS=, read -r L B T H <<< "$shape"
  f="$OUT/t_${mode}_${shape//,/x}"
  "$D/bench_grid" $how --mode $mode --shape $shape > "$f.log" 2>&1
  /opt/torch/.venv/bin/python scripts/torch_reference.py --grid --graph --loss sum --input-grad \
    --impls torch-fp16 --reps 10 --only $mode,$L,$B,$T,$H > "$f-torch.log" 2>&1
  echo "  $mode $shape: $(grep -E '^\| (Lstm|Gru) ' "$f.log" | cut -d'|' -f7,8,9 | tr -s ' ' | paste -sd';'); torch fp16: $(grep -E "^\| $mode " "$f-torch.log" | head -1 | cut -d'|' -f8,9 | tr -s ' ')"
done
(cd "$OUT" && tar -czf check.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
