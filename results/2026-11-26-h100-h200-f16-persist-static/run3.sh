#!/usr/bin/env bash
# On the GPU machine, the binaries of run.sh: which batches cuDNN's persistent algorithms run
# slowly at (f16 `PersistStatic` took 7-12x ours at batches 12 and 20 in run2.sh): f16 LSTM
# [30, B, 512] at more batches, and `PersistStaticSmallH` (f16 and fp32) at hidden 128, LSTM and
# GRU, beside `Standard`, ours and the default; graphed, `loss.backward()`, training | forward,
# µs an example, each shape twice.
#   results/2026-11-26-h100-h200-f16-persist-static/run3.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --api plain"
rows() { grep -E '^\| (Lstm|Gru) ' "$1" | cut -d'|' -f7-9 | tr -s ' ' | sed 's/op-//g' | tr '\n' ';'; }
for shape in 1,1,30,512 1,2,30,512 1,6,30,512 1,9,30,512 1,28,30,512 1,20,30,512; do
  f="$OUT/lstm_${shape//,/x}.log"
  for r in 1 2; do
    "$D/bench_grid" $how --mode lstm --shape $shape --variants op-f16-static,op-f16-standard,op-f16-persistent,op-f16-default >> "$f" 2>&1
  done
  echo "lstm $shape: $(rows "$f")"
done
for cell in lstm gru; do
  for shape in 1,12,30,128 1,20,30,128 1,20,35,128 1,24,30,128 1,32,30,128; do
    f="$OUT/${cell}_${shape//,/x}.log"
    for r in 1 2; do
      "$D/bench_grid" $how --mode $cell --shape $shape --variants op-f16-static-small-h,op-f16-standard,op-f16-persistent,op-f16-default,op-fp32-static-small-h,op-fp32-standard,op-fp32-default >> "$f" 2>&1
    done
    echo "$cell $shape: $(rows "$f")"
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
