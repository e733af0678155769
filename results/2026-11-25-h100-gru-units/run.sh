#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old 7608639` (old: a GRU's forward
# blocks took 16 units, whole tiles; new: the LSTM's units, multiples of 4, the last tile part
# empty): the GPU tests (the GRU's partial tiles against f64); memcheck over a partial-tile GRU;
# GRU training calls graphed, old / new / PyTorch fp16 / new / old, bf16 and f16.
#   results/2026-11-25-h100-gru-units/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 150 "$D/op-gpu-tests" --nocapture --test-threads=1 persistent > "$OUT/op-gpu-tests.log" 2>&1
echo "op-gpu-tests rc=$?"; grep -E "test result|FAILED|panicked" "$OUT/op-gpu-tests.log" | head -5
stamp "memcheck, a GRU of partial tiles"
for cl in 1 2; do
  CANDLE_RNN_PERSISTENT_CLUSTER=$cl,4 timeout 60 "$CS" --tool memcheck "$D/bench_grid" --no-loop --loss sum --input-grad --api direct --reps 1 --warmup 0 --phase train --mode gru --shape 2,8,6,200 --variants op-bf16-persistent > "$OUT/cs-memcheck-cl$cl.log" 2>&1
  echo "memcheck cl$cl rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/cs-memcheck-cl$cl.log" | tail -1)"
done
stamp "GRU training graphed: old, new, PyTorch, new, old"
op() {
  for s in 1,32,30,128 1,32,30,512 1,32,30,1024 2,20,35,1500; do
    timeout 40 "$D/$1" --no-loop --graph --loss sum --input-grad --api direct --reps 10 --warmup 5 --mode gru --shape $s --variants op-bf16-persistent,op-f16-persistent --json "$OUT/$2-$s.json" >> "$OUT/$2.log" 2>&1 || echo "$2 $s failed"
  done
}
op old-bench_grid old_a; op bench_grid new_a
PYTHONUNBUFFERED=1 timeout 60 python3 scripts/torch_reference.py --grid --graph --loss sum --input-grad --reps 10 --warmup 5 --impls torch-fp16 --only gru,1,32,30,128 --only gru,1,32,30,512 --only gru,1,32,30,1024 --only gru,2,20,35,1500 --json "$OUT/torch.json" > "$OUT/torch.log" 2>&1; echo "torch rc=$?"
op bench_grid new_b; op old-bench_grid old_b
for f in old_a new_a new_b old_b; do echo "== $f"; grep -hE "^\| Gru" "$OUT/$f.log" | cut -d'|' -f3-9; done
grep -E "^\| gru" "$OUT/torch.log"
stamp done
