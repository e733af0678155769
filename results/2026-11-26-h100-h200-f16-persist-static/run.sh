#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at 9dc4242 (single layers in blocks of
# at least 8 units): f16 LSTMs on the crate's kernels (op-f16-persistent) against cuDNN's f16
# `PersistStatic` (op-f16-static), where `Heuristic` takes PersistStatic from hidden 256 up
# (choose.rs `OURS_LEAD_OVER_PERSIST_STATIC_MAX_HIDDEN`), graphed, through `loss.backward()`
# (--api plain) and `candle_cudnn_rnn::backward` (--api direct): training | forward, µs an
# example, each shape twice.
#   results/2026-11-26-h100-h200-f16-persist-static/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --mode lstm"
rows() { grep -E '^\| Lstm ' "$1" | cut -d'|' -f7-9 | tr -s ' ' | tr '\n' ';'; }
for shape in 1,32,30,256 1,32,30,384 1,32,30,512 1,32,200,512 1,16,30,512 1,8,30,512 1,32,30,1024 1,32,200,1024 \
  2,32,30,512 2,20,35,512; do
  for api in plain direct; do
    f="$OUT/${shape//,/x}_$api.log"
    for r in 1 2; do
      "$D/bench_grid" $how --api $api --shape $shape --variants op-f16-persistent,op-f16-static,op-f16-default >> "$f" 2>&1
    done
    echo "$shape $api: $(rows "$f")"
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
