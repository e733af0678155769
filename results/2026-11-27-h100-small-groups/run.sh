#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh NEW (4 samples a batch group at hidden up to
# 128 from batch 32; wide layers' groups without backward clusters) and OLD (bench_grid of the
# rule before), one command:
#   the op's GPU tests; the default, old | new | old (graphed training | forward, µs an example,
#   bf16) on the shapes the change moves; the plain API (loss.backward(), then also candle-nn's
#   SGD step) against candle_cudnn_rnn::backward on five grid shapes; the grid (results/2026-11-27-h100-grid/run.sh's
#   three passes) into OUT/grid.
#   results/2026-11-27-h100-small-groups/run.sh NEW OLD OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$2 OUT=$3
source scripts/on-gpu.sh
OLD=$D D=$1
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
stamp "GPU tests"; gpu_tests
stamp "the default: old | new | old"
with() { local d=$D; D=$1; shift; bench_us "$@"; D=$d; }
for s in 1,32,30,128 1,48,30,128 1,32,200,128 1,32,30,1024 1,64,30,1024; do
  for cell in lstm gru; do
    echo "$cell [$s] | $(with "$OLD" "" $cell $s op-bf16-default) | $(bench_us "" $cell $s op-bf16-default)" \
      "| $(with "$OLD" "" $cell $s op-bf16-default)"
  done
done | tee "$OUT/ab.txt"
stamp "the plain API | direct | plain with candle-nn's SGD (graphed training, µs an example, the default)"
for spec in lstm,1,32,30,512,bf16 gru,1,128,30,512,f16 lstm,2,20,35,1500,bf16 gru,3,128,30,512,f16 lstm,1,32,30,512,tf32; do
  IFS=, read -r mode l b t h p <<< "$spec"
  line=""
  for api in plain direct "plain --sgd"; do
    v=$(timeout 90 "$D/bench_grid" --no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api $api \
      --mode $mode --shape $l,$b,$t,$h --variants op-$p-default 2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
      | awk -F'|' '{gsub(/ /,"",$8); print $8}')
    line="$line | $v"
  done
  echo "$mode [$l,$b,$t,$h] $p$line"
done | tee "$OUT/plain.txt"
for p in grid1 grid2 grid3; do bash results/2026-11-27-h100-grid/run.sh "$D" "$OUT" $p | grep -v "^NVIDIA"; done
cd "$OUT" && tar czf grid.tgz grid && rm -rf grid
stamp done
