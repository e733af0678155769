#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR at the GRU forward's commit (and
# DIR/exp-bench_grid, the experiment below): the GPU tests (the GRU forward against f64);
# PTB large and medium bf16's first epoch (the LSTM after the cell was made generic: the same
# lines as before); compute-sanitizer over the GRU forward at small shapes, with clusters of 1,
# 2 and 4; GRU forwards on the kernels against cuDNN (eager) and PyTorch's fp16 module; and the
# TF32 GRU shapes where the op trailed PyTorch by 1-2% with cuDNN's own kernels, with the
# experiment's binary passing cuDNN a zero h_0 and dh_n and asking for dh_0 as PyTorch does
# (CANDLE_RNN_EXP=3) or not (0).
#   results/2026-11-25-h100-gru-forward/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 150 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/op-gpu-tests.log" 2>&1
echo "op-gpu-tests rc=$?"; grep -E "test result|FAILED|panicked" "$OUT/op-gpu-tests.log" | head -5
grep -E "gru|GRU" "$OUT/op-gpu-tests.log" | grep -iE "error|worst|max" | head -12
for c in large medium; do
  stamp "PTB $c bf16 epoch 1"
  timeout 100 "$D/ptb-lm" train --config $c --precision bf16 --epochs 1 --out /tmp/$c > "$OUT/$c-epoch1.log" 2> "$OUT/$c-epoch1.err"; echo "rc=$?"
  grep -E "^Epoch" "$OUT/$c-epoch1.log"
done
stamp "compute-sanitizer over the GRU forward"
for cl in 1 2 4; do
  for tool in memcheck racecheck synccheck; do
    CANDLE_RNN_PERSISTENT_CLUSTER=$cl,4 timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --reps 1 --warmup 0 --phase forward --mode gru --shape 2,8,6,256 --variants op-bf16-persistent > "$OUT/cs-$tool-cl$cl.log" 2>&1
    echo "$tool cl$cl rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/cs-$tool-cl$cl.log" | tail -1) $(grep -c Persistent "$OUT/cs-$tool-cl$cl.log") persistent rows"
  done
done
stamp "GRU forward: ours, cuDNN (eager), PyTorch fp16"
V=op-bf16-persistent,op-f16-persistent,op-bf16-standard,op-f16-default
for s in 1,32,30,128 1,32,30,512 1,32,30,1024 2,20,35,1500 1,8,30,256 2,20,35,650; do
  timeout 40 "$D/bench_grid" --no-loop --reps 10 --warmup 5 --phase forward --mode gru --shape $s --variants $V --json "$OUT/gru-fwd-$s.json" >> "$OUT/gru-fwd.log" 2>&1 || echo "gru fwd $s failed"
done
PYTHONUNBUFFERED=1 timeout 90 python3 scripts/torch_reference.py --grid --reps 10 --warmup 5 --impls torch-fp16 --only gru,1,32,30,128 --only gru,1,32,30,512 --only gru,1,32,30,1024 --only gru,2,20,35,1500 --json "$OUT/torch-gru.json" > "$OUT/torch-gru.log" 2>&1; echo "torch rc=$?"
grep -E "Persistent|Standard|Static" "$OUT/gru-fwd.log" | cut -c1-160
grep -E "gru" "$OUT/torch-gru.log" | head -8
stamp "TF32 GRU: experiment (zero h_0/dh_n, dh_0 computed) against the op and PyTorch"
for s in 1,128,30,1024 3,128,30,512; do
  for e in 0 3 0 3; do
    CANDLE_RNN_EXP=$e timeout 40 "$D/exp-bench_grid" --no-loop --graph --loss sum --input-grad --api direct --reps 10 --warmup 5 --phase train --mode gru --shape $s --variants op-tf32-default,op-fp32-default > "$OUT/exp-$s-$e.log" 2>&1
    echo "$s exp=$e: $(grep -E 'tf32|fp32' "$OUT/exp-$s-$e.log" | awk -F'|' '{printf "%s %s; ", $7, $8}')"
  done
done
PYTHONUNBUFFERED=1 timeout 60 python3 scripts/torch_reference.py --grid --graph --loss sum --input-grad --reps 10 --warmup 5 --impls torch-tf32,torch-fp32 --only gru,1,128,30,1024 --only gru,3,128,30,512 > "$OUT/exp-torch.log" 2>&1; echo "torch rc=$?"
grep -E "gru" "$OUT/exp-torch.log" | head -6
stamp done
