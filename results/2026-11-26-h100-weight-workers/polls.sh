#!/usr/bin/env bash
# On the GPU machine: graphed training | forward, µs an example, bf16 on the crate's kernels
# (workers off), with the grid barrier's polls back to back (bench_grid) and with a
# __nanosleep(32 or 128) between them (ns32-, ns128-bench_grid: common.cuh's wait_acquire
# changed so, then reverted), in turn.
#   results/2026-11-26-h100-weight-workers/polls.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct"
for c in gru:1,32,30,512 lstm:1,32,30,512 lstm:1,32,30,1024 gru:1,32,30,1024 lstm:2,20,35,1500 gru:3,32,30,512; do
  IFS=: read -r cell shape <<< "$c"
  line=""
  for v in base:bench_grid ns32:ns32-bench_grid ns128:ns128-bench_grid base:bench_grid ns32:ns32-bench_grid ns128:ns128-bench_grid; do
    IFS=: read -r name bin <<< "$v"
    line="$line | $name $(timeout 60 "$D/$bin" $how --mode $cell --shape $shape --variants op-bf16-persistent 2>&1 \
      | grep -E '^\| (Lstm|Gru) ' | cut -d'|' -f8-9 | tr -s ' ')"
  done
  echo "$cell [$shape]$line"
done | tee "$OUT/polls.txt"
stamp done
