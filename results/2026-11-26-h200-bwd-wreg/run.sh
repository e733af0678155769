#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old main` on branch bwd-wreg (the
# persistent backward keeps each warp's weight fragments in registers where they fit). Part
# `same`: the op's GPU tests; PTB large and medium bf16's first epoch, new and old binaries
# (medium's backward takes the registers, large's does not: both must print the same lines);
# graphed training calls old / new / old / new. Part `check`: gpu_check --persistent and
# compute-sanitizer over training calls at small shapes that take the registers.
#   results/2026-11-26-h200-bwd-wreg/run.sh same|check DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
part=$1 D=$2 OUT=$3
source scripts/on-gpu.sh
if [ "$part" = same ]; then
  scripts/persistent-gpu.sh same "$D" "$OUT/same" 2>&1
  stamp "graphed training, µs an example: old / new / old / new"
  for r in 1 2; do for b in old-bench_grid bench_grid; do
    for s in lstm:1,32,30,128 lstm:1,32,30,512 lstm:1,32,30,1024 gru:1,32,30,512 gru:1,32,30,1024 \
      lstm:1,128,30,512 lstm:1,128,30,1024 gru:1,128,30,1024 lstm:2,20,35,650 lstm:2,20,35,1500; do
      IFS=: read -r cell shape <<< "$s"
      echo -n "$b.$r $cell $shape: "
      timeout 60 "$D/$b" --no-loop --graph --loss sum --input-grad --api direct --reps 20 --warmup 5 \
        --mode $cell --shape $shape --variants op-bf16-persistent --json "$OUT/${b}_${r}_${cell}_$shape.json" 2>&1 \
        | grep -E "^\| (Lstm|Gru)" | cut -d'|' -f7,8
    done
  done; done
else
  stamp "gpu_check --persistent"
  timeout 280 "$D/gpu_check" --persistent > "$OUT/persistent.log" 2>&1
  echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent.log") failed $(grep -c '| FAIL' "$OUT/persistent.log")"
  grep -E "\| FAIL|panick|^Error" "$OUT/persistent.log" | head -8 | cut -c1-300
  stamp "compute-sanitizer over training calls"
  for cell in lstm gru; do for shape in 1,8,6,256 1,77,4,200; do for tool in memcheck racecheck synccheck; do
    log="$OUT/cs-$tool-$cell-${shape//,/x}.log"
    timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum --input-grad \
      --api direct --reps 1 --warmup 0 --phase train --mode $cell --shape $shape \
      --variants op-bf16-persistent > "$log" 2>&1
    echo "$tool $cell $shape rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//');" \
      "served by ours: $(grep -c '(Persistent)' "$log")"
  done; done; done
fi
(cd "$OUT" && tar -czf all-$part.tgz --exclude 'all*.tgz' --exclude console.txt ./* && find . -type f ! -name 'all*.tgz' ! -name console.txt -delete)
stamp "done"
