#!/usr/bin/env bash
# Where a training step of the op spends its time next to PyTorch's, on three grid shapes (a
# small GRU, a large 3-layer LSTM, PTB large's LSTM): per kernel device time (ncu for the op,
# torch.profiler for PyTorch), and the host's time per call (bench_grid's "host" column, and
# the profile's for PyTorch). Run on a GPU machine:
#   scripts/profile-op.sh BENCH_GRID OUT_DIR [PRECISION]   (PRECISION: fp32 or tf32; default fp32)
set -euo pipefail
grid=$1 out=$2 precision=${3:-fp32}
mkdir -p "$out"
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1 || true)
for spec in gru,1,32,30,128 lstm,3,128,200,1024 lstm,2,20,35,1500; do
  mode=${spec%%,*} shape=${spec#*,}
  "$grid" --mode "$mode" --shape "$shape" --variants "op-$precision" --no-loop --warmup 20 --reps 50 \
    --json "$out/op_${mode}_${shape//,/x}_$precision.json" | tail -n 1
  if [ -n "$ncu_bin" ]; then
    # 1 warm-up + 2 timed training steps, then as many forwards; every kernel of them.
    # One metric, one pass per kernel (the default sections replay every kernel many times).
    timeout 150 "$ncu_bin" --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --csv \
      "$grid" --mode "$mode" --shape "$shape" --variants "op-$precision" --no-loop --warmup 1 --reps 2 \
      > "$out/ncu_op_${mode}_${shape//,/x}_$precision.csv" 2> "$out/ncu_op_${mode}_${shape//,/x}_$precision.log" || true
  fi
  python3 scripts/torch_reference.py --profile "$spec" --impl "torch-$precision" \
    > "$out/torch_${mode}_${shape//,/x}_$precision.md" 2>&1 || true
done
