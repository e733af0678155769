#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` (main): the blocks per cluster of the
# forward and the backward (CANDLE_RNN_PERSISTENT_CLUSTER=F,B; by default 1,4, chosen on PTB
# large) on the grid's shapes with batch 32 and PTB large's, LSTM and GRU bf16, graphed
# training | eager forward, two passes; then compute-sanitizer over LSTM and GRU training
# (clusters 1 and 4).
#   results/2026-11-25-h100-clusters/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "clusters F,B: training graphed | forward"
for pass in a b; do
  for cell in lstm gru; do
    for shape in 1,32,30,256 1,32,30,512 1,32,30,1024 1,8,30,1024 2,20,35,1500; do
      for cl in 1,4 2,4 4,4 1,2; do
        echo -n "$pass $cell $shape cl=$cl: "
        CANDLE_RNN_PERSISTENT_CLUSTER=$cl timeout 60 "$D/bench_grid" --no-loop --graph --loss sum --input-grad \
          --api direct --reps 10 --warmup 5 --mode $cell --shape $shape --variants op-bf16-persistent \
          --json "$OUT/cl_${pass}_${cell}_${shape}_$cl.json" 2>&1 | tail -n 1 | cut -d'|' -f7-9
      done
    done
  done
done
stamp "compute-sanitizer"
for cell in lstm gru; do
  for cl in 1 4; do
    for tool in memcheck racecheck synccheck; do
      log="$OUT/cs-$tool-$cell-cl$cl.log"
      CANDLE_RNN_PERSISTENT_CLUSTER=1,$cl timeout 60 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" \
        --no-loop --loss sum --input-grad --api direct --reps 1 --warmup 0 --phase train --mode $cell \
        --shape 2,8,6,256 --variants op-bf16-persistent > "$log" 2>&1
      echo "$tool $cell cl$cl rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//');" \
        "served by ours: $(grep -c '(Persistent)' "$log")"
    done
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
