#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR`: units per block with the backward's
# clusters (CANDLE_RNN_PERSISTENT_UNITS=F,B with CANDLE_RNN_PERSISTENT_CLUSTER=F,B), bf16 graphed
# training | forward, µs an example, --api direct, the rule's row first and last; then PyTorch's
# fp16 module on the same shapes.
#   results/2026-11-26-h100-block-units/run2.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--graph --loss sum --input-grad --reps 10 --warmup 10"
row() { grep -E '^\| (Lstm|Gru) ' "$1" | head -1 | cut -d'|' -f8,9 | tr -s ' '; }
for c in "1,32,30,512:8,8/1,2 8,8/1,1 8,16/1,1 8,12/1,1" "1,32,200,512:8,8/1,2 8,8/1,1" \
  "1,32,30,1024:8,8/1,1 8,16/1,1 16,16/1,1 16,8/1,2" "1,32,30,256:8,8/1,1 8,4/1,1" "1,20,35,650:8,8/1,1 12,12/1,1 12,8/1,1"; do
  shape=${c%%:*} sets=${c#*:}
  for cell in lstm gru; do
    stamp "$cell $shape"
    for u in rule $sets rule; do
      f="$OUT/${cell}_${shape//,/x}_u${u//[,\/]/-}.log"
      if [ $u = rule ]; then "$D/bench_grid" --no-loop $how --api direct --mode $cell --shape $shape --variants op-bf16-persistent > "$f" 2>&1
      else CANDLE_RNN_PERSISTENT_UNITS=${u%/*} CANDLE_RNN_PERSISTENT_CLUSTER=${u#*/} "$D/bench_grid" --no-loop $how --api direct --mode $cell --shape $shape --variants op-bf16-persistent > "$f" 2>&1; fi
      echo "  units/clusters $u: $(row "$f")"
    done
  done
done
for c in "gru 1,32,30,512" "lstm 1,32,30,512" "gru 1,32,200,512" "gru 1,32,30,1024" "gru 1,32,30,256"; do
  set -- $c
  f="$OUT/torch_$1_${2//,/x}.log"
  python3 scripts/torch_reference.py --grid $how --only $1,$2 --impls torch-fp16 > "$f" 2>&1
  echo "torch fp16 $1 $2: $(grep -E '^\| *(lstm|gru|Lstm|Gru) ' "$f" | head -1 | tr -s ' ')"
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
