#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at f7409c1: single layers at batches
# 33-64, where `Heuristic` trains on cuDNN (`choose.rs` `ours_lead_in_chunks`: inference only):
# the crate's kernels (op-bf16-persistent, op-f16-persistent) against cuDNN's `Standard` and the
# default, graphed, through `loss.backward()`, training | forward, µs an example, each twice.
#   results/2026-11-26-h100-batch64-single/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --api plain"
rows() { grep -E '^\| (Lstm|Gru) ' "$1" | cut -d'|' -f7-9 | tr -s ' ' | sed 's/op-//g' | tr '\n' ';'; }
for shape in 1,64,30,512 1,64,30,256 1,64,30,1024 1,64,200,512 1,48,30,512 1,40,30,512 1,64,30,128 1,64,35,650; do
  for cell in lstm gru; do
    f="$OUT/${cell}_${shape//,/x}.log"
    for r in 1 2; do
      "$D/bench_grid" $how --mode $cell --shape $shape \
        --variants op-bf16-persistent,op-bf16-standard,op-f16-persistent,op-f16-default >> "$f" 2>&1
    done
    echo "$cell $shape: $(rows "$f")"
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
