#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: where a training call of the grid's
# small one-layer shapes spends the device's time, kernel by kernel (Nsight Compute's
# gpu__time_duration of every kernel of 1 warm-up and 2 timed eager calls, then as many
# forwards; the machine has no Nsight Systems), ours (bf16) beside cuDNN's f16
# PersistStaticSmallH; issue 33's and 34's 2x targets at [30, 32, 128] are furthest from met
# there. Also each one's graphed time (bench_grid, µs an example, training | forward).
#   results/2026-11-27-h100-small-profile/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
for spec in gru,1,32,30,128,op-bf16-persistent gru,1,32,30,128,op-f16-static-small-h \
  lstm,1,32,30,128,op-bf16-persistent lstm,1,32,30,512,op-bf16-persistent; do
  IFS=, read -r mode l b t h variant <<< "$spec"
  name=${mode}_${l}x${b}x${t}x${h}_$variant
  echo "$name | $(bench_us "" $mode $l,$b,$t,$h $variant)"
  timeout 150 "$ncu" --clock-control none --metrics gpu__time_duration.sum --csv \
    "$bin/bench_grid" --no-loop --loss sum --input-grad --warmup 1 --reps 2 --api direct \
    --mode $mode --shape $l,$b,$t,$h --variants $variant > "$OUT/$name.csv" 2> "$OUT/$name.log"
done | tee "$OUT/graphed.txt"
cd "$OUT" && tar czf ncu.tgz *.csv *.log && rm -f *.csv *.log
stamp done
