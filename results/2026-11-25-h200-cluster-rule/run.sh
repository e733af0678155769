#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old 83255cf` built on branch
# one-cluster (main's shape_clusters rule, plus CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1, off unless
# set): the GPU tests and PTB large and medium bf16 first epochs beside 83255cf's (the
# backward's clusters before the rule); gpu_check --persistent on the rule; small layers in one
# cluster (1) against the rule's grid barrier (0), LSTM and GRU over batches 1-32 and hidden
# 64-256, graphed training | eager forward, alternating.
#   results/2026-11-25-h200-cluster-rule/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
scripts/persistent-gpu.sh same "$D" "$OUT/same"
source scripts/on-gpu.sh
stamp "gpu_check --persistent, the rule's clusters"
L=$OUT/persistent.log
timeout 240 "$D/gpu_check" --persistent --json "$OUT/persistent.json" > "$L" 2>&1
echo "gpu_check rc=$? ok $(grep -c '| ok |' "$L") failed $(grep -c '| FAIL' "$L")"
grep -E "\| FAIL|panick|^Error" "$L" | head -5 | cut -c1-300
stamp "grid barrier (0) against one cluster (1): training graphed | forward"
for cell in lstm gru; do
  for h in 64 128 256; do
    for b in 1 4 8 16 32; do
      for o in 0 1 0 1; do
        echo -n "$cell 1,$b,30,$h one=$o: "
        CANDLE_RNN_PERSISTENT_ONE_CLUSTER=$o timeout 60 "$D/bench_grid" --no-loop --graph --loss sum --input-grad \
          --api direct --reps 10 --warmup 5 --mode $cell --shape 1,$b,30,$h --variants op-bf16-persistent \
          --json "$OUT/one_${cell}_${b}_${h}_$o.json" 2>&1 | tail -n 1 | cut -d'|' -f7-9
      done
    done
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
