#!/usr/bin/env bash
# On the GPU machine, the binaries of run.sh: f16 LSTMs on the crate's kernels against cuDNN's f16
# `PersistStatic` and the default, at the batches run.sh left out (4-28) and in 2-layer stacks,
# graphed, through `loss.backward()`: training | forward, µs an example, each shape twice.
#   results/2026-11-26-h100-h200-f16-persist-static/run2.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --mode lstm"
rows() { grep -E '^\| Lstm ' "$1" | cut -d'|' -f7-9 | tr -s ' ' | tr '\n' ';'; }
for shape in 1,4,30,512 1,12,30,512 1,20,30,512 1,24,30,512 1,20,35,512 1,20,30,1024 1,20,30,256 1,24,30,256 \
  2,8,30,512 2,16,30,512 2,24,30,512 2,20,30,256 2,32,30,256 2,32,30,1024; do
  for api in plain; do
    f="$OUT/${shape//,/x}_$api.log"
    for r in 1 2; do
      "$D/bench_grid" $how --api $api --shape $shape --variants op-f16-persistent,op-f16-static,op-f16-default >> "$f" 2>&1
    done
    echo "$shape $api: $(rows "$f")"
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
