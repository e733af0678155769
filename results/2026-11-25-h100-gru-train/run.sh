#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR at the GRU backward's commit: the GPU
# tests (GRU training on the crate's kernels against f64, dropout replay and gradients);
# PTB large and medium bf16's first epoch (the LSTM: the same lines as before); compute-sanitizer
# over a GRU training call at small shapes (clusters of 1, 2 and 4 in the backward); GRU training
# calls graphed (ours, cuDNN, Auto) beside PyTorch's fp16 module, ours / PyTorch / ours.
#   results/2026-11-25-h100-gru-train/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 180 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/op-gpu-tests.log" 2>&1
echo "op-gpu-tests rc=$?"; grep -E "test result|FAILED|panicked|> " "$OUT/op-gpu-tests.log" | head -12
grep -E "^GRU.*Persistent" "$OUT/op-gpu-tests.log" | grep training | head -16
for c in large medium; do
  stamp "PTB $c bf16 epoch 1"
  timeout 100 "$D/ptb-lm" train --config $c --precision bf16 --epochs 1 --out /tmp/$c > "$OUT/$c-epoch1.log" 2> "$OUT/$c-epoch1.err"; echo "rc=$?"
  grep -E "^Epoch" "$OUT/$c-epoch1.log"
done
stamp "compute-sanitizer over GRU training"
for cl in 1 2 4; do
  for tool in memcheck racecheck synccheck; do
    CANDLE_RNN_PERSISTENT_CLUSTER=1,$cl timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum --input-grad --api direct --reps 1 --warmup 0 --phase train --mode gru --shape 2,8,6,256 --variants op-bf16-persistent > "$OUT/cs-$tool-cl$cl.log" 2>&1
    echo "$tool cl$cl rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/cs-$tool-cl$cl.log" | tail -1) $(grep -c '(Persistent)' "$OUT/cs-$tool-cl$cl.log") persistent rows; nvjet: $(grep -c nvjet "$OUT/cs-$tool-cl$cl.log")"
  done
done
stamp "GRU training graphed: ours, PyTorch fp16, ours"
V=op-bf16-persistent,op-f16-persistent,op-bf16-standard,op-f16-default,op-bf16-auto
op() {
  for s in 1,32,30,128 1,32,30,512 1,32,30,1024 2,20,35,1500; do
    timeout 60 "$D/bench_grid" --no-loop --graph --loss sum --input-grad --api direct --reps 10 --warmup 5 --mode gru --shape $s --variants $V --json "$OUT/op_$1-$s.json" >> "$OUT/op_$1.log" 2>&1 || echo "op $1 $s failed"
  done
}
op a
PYTHONUNBUFFERED=1 timeout 120 python3 scripts/torch_reference.py --grid --graph --loss sum --input-grad --reps 10 --warmup 5 --impls torch-fp16,torch-amp-fp16 --only gru,1,32,30,128 --only gru,1,32,30,512 --only gru,1,32,30,1024 --only gru,2,20,35,1500 --json "$OUT/torch_a.json" > "$OUT/torch_a.log" 2>&1; echo "torch rc=$?"
op b
grep -hE "^\| Gru" "$OUT/op_a.log" "$OUT/op_b.log" | cut -c1-150
grep -E "^\| gru" "$OUT/torch_a.log"
stamp done
