#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old 5deff45` (new: single-layer blocks
# of at least 8 units at batches of one chunk, the backward unclustered up to hidden 512; old:
# main before): bf16 graphed training | forward, µs an example, --api direct, on the crate's
# kernels (op-bf16-persistent) as old / new / new / old; then PyTorch's fp16 module and the
# op's default (plain API) on the grid's single-layer batch-32 shapes.
#   results/2026-11-26-h100-block-units/run3.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--graph --loss sum --input-grad --reps 10 --warmup 10"
row() { grep -E '^\| (Lstm|Gru) ' "$1" | head -1 | cut -d'|' -f8,9 | tr -s ' '; }
stamp "old / new / new / old, op-bf16-persistent"
for shape in 1,1,30,512 1,8,30,512 1,16,30,512 1,24,30,512 1,32,30,512 1,32,200,512 1,32,30,256 1,32,30,128 \
  1,32,30,1024 1,64,30,512; do
  for cell in lstm gru; do
    line=""
    for who in old new new old; do
      bin=$D/bench_grid; [ $who = old ] && bin=$D/old-bench_grid
      f="$OUT/${cell}_${shape//,/x}_$who.log"
      "$bin" --no-loop $how --api direct --mode $cell --shape $shape --variants op-bf16-persistent >> "$f" 2>&1
      line="$line |$who $(row "$f" | tail -1)"
    done
    echo "$cell $shape$line"
  done
done
stamp "default (plain API) / PyTorch fp16 / default"
for shape in 1,32,30,128 1,32,30,512 1,32,30,1024 1,32,200,512; do
  for cell in lstm gru; do
    f="$OUT/default_${cell}_${shape//,/x}.log" g="$OUT/torch_${cell}_${shape//,/x}.log"
    "$D/bench_grid" --no-loop $how --api plain --mode $cell --shape $shape --variants op-bf16-default,op-f16-default > "$f" 2>&1
    python3 scripts/torch_reference.py --grid $how --only $cell,$shape --impls torch-fp16 > "$g" 2>&1
    "$D/bench_grid" --no-loop $how --api plain --mode $cell --shape $shape --variants op-bf16-default,op-f16-default >> "$f" 2>&1
    echo "$cell $shape: ours $(grep -E '^\| (Lstm|Gru) ' "$f" | cut -d'|' -f6-9 | tr -s ' ' | tr '\n' ';') torch $(grep -E '^\| *(lstm|gru) ' "$g" | head -1 | cut -d'|' -f8,9 | tr -s ' ')"
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
