#!/usr/bin/env bash
# On the GPU machine: DIR/one holds bench_grid and gpu_check of branch one-cluster (small layers
# in one thread-block cluster with CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1), DIR bench_grid of main.
# gpu_check --persistent with one cluster; graphed training and eager forward, grid barrier (0)
# against one cluster (1), alternating, over batches and small hidden sizes; per-kernel device
# times (ncu) of seq-30 training calls on main's kernels.
#   results/2026-11-25-h100-one-cluster/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1/one OUT=$2
source scripts/on-gpu.sh
M=$1
for f in "$M"/*.xz; do [ -e "$f" ] || continue; [ -x "${f%.xz}" ] || { xz -dkf -T8 "$f"; chmod +x "${f%.xz}"; }; done
stamp "gpu_check --persistent, one cluster"
L=$OUT/persistent_one.log
CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 timeout 240 "$D/gpu_check" --persistent > "$L" 2>&1
echo "one rc=$? ok $(grep -c '| ok |' "$L") failed $(grep -c '| FAIL' "$L")"
grep -E "\| FAIL|panick|^Error" "$L" | head -5 | cut -c1-300
stamp "grid barrier (0) against one cluster (1): training graphed | forward"
for cell in lstm gru; do
  for shape in 1,1,30,128 1,8,30,128 1,16,30,128 1,32,30,128 1,32,30,64 1,32,30,200 1,1,30,256 1,4,30,256 1,16,30,256 1,32,30,256; do
    for o in 0 1 0 1; do
      echo -n "$cell $shape one=$o: "
      CANDLE_RNN_PERSISTENT_ONE_CLUSTER=$o timeout 60 "$D/bench_grid" --no-loop --graph --loss sum --input-grad \
        --api direct --reps 10 --warmup 5 --mode $cell --shape $shape --variants op-bf16-persistent \
        --json "$OUT/one_${cell}_${shape}_$o.json" 2>&1 | tail -n 1 | cut -d'|' -f7-9
    done
  done
done
stamp "ncu: per-kernel device time of eager training calls (main)"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1)
for cell in gru lstm; do
  for shape in 1,32,30,1024 1,32,30,128; do
    timeout 120 "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv \
      "$M/bench_grid" --no-loop --loss sum --input-grad --api direct --mode $cell --shape $shape \
      --variants op-bf16-persistent --phase train --warmup 1 --reps 2 > "$OUT/ncu_${cell}_$shape.csv" 2> "$OUT/ncu_${cell}_$shape.log"
    echo "ncu $cell $shape rc=$?"
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
