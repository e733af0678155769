#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` on branch fwd-prefetch: gpu_check
# --persistent; then Nsight Compute's full set over one launch of each persistent recurrence at
# batch 128 (four chunks) and, for comparison, at batch 32 (one chunk): LSTM [30, B, 1024] bf16,
# the forward of an inference call and the backward of a training call (its clusters off:
# Nsight Compute cannot replay the backward's cluster launch). Where does a chunk's time go?
#   results/2026-11-26-h200-chunk-profile/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "gpu_check --persistent"
timeout 280 "$D/gpu_check" --persistent > "$OUT/persistent.log" 2>&1
echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent.log") failed $(grep -c '| FAIL' "$OUT/persistent.log")"
grep -E "\| FAIL|panick|^Error" "$OUT/persistent.log" | head -8 | cut -c1-300
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
for b in 128 32; do
  for k in fwd:forward bwd:train; do
    IFS=: read -r kernel phase <<< "$k"
    stamp "ncu: persistent_$kernel, LSTM [30, $b, 1024] bf16 ($phase call)"
    CANDLE_RNN_PERSISTENT_CLUSTER=1,1 timeout 150 "$NCU" --kernel-name "persistent_$kernel" --launch-count 1 \
      --set full --clock-control none --csv --page details "$D/bench_grid" --no-loop --loss sum --input-grad \
      --api direct --phase $phase --reps 1 --warmup 0 --mode lstm --shape 1,$b,30,1024 \
      --variants op-bf16-persistent > "$OUT/ncu_${kernel}_b$b.csv" 2> "$OUT/ncu_${kernel}_b$b.log"
    echo "rc=$?"
    grep -E '"(Duration|Memory Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|DRAM Throughput|Registers Per Thread|Warp Cycles Per Issued Instruction|Issue Slots Busy|Executed Ipc Active)"' \
      "$OUT/ncu_${kernel}_b$b.csv" | awk -F'","' '{print $(NF-2)" = "$NF" "$(NF-1)}' | tr -d '"' | head -14
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
