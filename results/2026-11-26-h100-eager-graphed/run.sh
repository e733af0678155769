#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at 26e34e2: past batch 32, the crate's
# kernels (op-bf16-persistent) against cuDNN's `Standard` (bf16), `PersistStatic` (f16, LSTM)
# and the default, each shape timed eagerly (as candle calls it, a synchronization per call)
# and graphed (the device's time), through `loss.backward()`, training | forward, µs an example.
#   results/2026-11-26-h100-eager-graphed/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --loss sum --input-grad --reps 20 --warmup 10 --api plain"
rows() { grep -E '^\| (Lstm|Gru) ' "$1" | cut -d'|' -f7-9 | tr -s ' ' | sed 's/op-//g' | tr '\n' ';'; }
shapes=${SHAPES:-"1,128,30,512 1,128,30,256 1,128,30,1024 1,256,30,512 1,96,30,512 1,128,30,128 3,128,30,512 3,128,30,1024 3,128,200,512 3,64,30,512"}
for shape in $shapes; do
  for cell in lstm gru; do
    v=op-bf16-persistent,op-bf16-standard,op-f16-default
    [ $cell = lstm ] && v=$v,op-f16-static
    # REVERSE=1: the variants in the opposite order (eager times drift within a process).
    [ "${REVERSE:-0}" = 1 ] && v=$(echo $v | tr ',' '\n' | tac | paste -sd,)
    for g in ${MODES:-graph eager}; do
      f="$OUT/${cell}_${shape//,/x}_$g${REVERSE:+_r$REVERSE}.log"
      flag=""; [ $g = graph ] && flag=--graph
      "$D/bench_grid" $how $flag --mode $cell --shape $shape --variants $v > "$f" 2>&1
      echo "$cell $shape $g: $(rows "$f")"
    done
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
