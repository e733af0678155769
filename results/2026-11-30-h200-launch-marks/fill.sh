#!/usr/bin/env bash
# The backward's fill with more loads in flight: lab builds of LSTM [30, 32, 512]'s and
# [30, 32, 1024]'s backward plans (lab.sh's bwd512, bwd1024) with FILL (common.cuh) at 16, 32 and 64,
# the tile by rows (old: HEAD's kernels) and by 8x8 blocks (new: 4c820c1's), in DIR as
# lab-VARIANT-PLAN: each run twice in turn, the marks of its last launch. The harnesses are
# lab.sh build's of 30 steps (old16, new16), and the same from sources whose common.cuh sets
# FILL to 32 or 64 (old64, new32, new64).
#   fill.sh DIR
dir=$1
for plan in bwd512 bwd1024; do
  for round in 1 2; do
    for v in old16 old64 new16 new32 new64; do
      echo "$plan $v: $(timeout 30 "$dir/lab-$v-$plan" 30 2>&1 | grep -vE 'output mean|config' | tr '\n' ' ')"
    done
  done
done
