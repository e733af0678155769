#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: deep stacks past batch 32 (bf16,
# graphed training | forward, µs an example), ours in 1, 4 and 8 batch groups (forced through
# CANDLE_RNN_PERSISTENT_GROUPS) against cuDNN's Standard and the default, to place the rule of
# kernel.rs's `shape_groups` for stacks deeper than two layers and choose.rs's inference rule.
#   results/pending-deep-stacks/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
stamp "the default | ours in 1 | 4 | 8 groups | Standard"
for s in 3,128,30,512 3,128,200,512 3,128,30,256 3,128,30,128 3,64,30,128 4,64,30,256 2,128,30,512; do
  for cell in lstm gru; do
    echo "$cell [$s] | $(bench_us "" $cell $s op-bf16-default) | $(bench_us 1 $cell $s op-bf16-persistent)" \
      "| $(bench_us 4 $cell $s op-bf16-persistent) | $(bench_us 8 $cell $s op-bf16-persistent)" \
      "| $(bench_us "" $cell $s op-bf16-standard)"
  done
done | tee "$OUT/stacks.txt"
stamp done
