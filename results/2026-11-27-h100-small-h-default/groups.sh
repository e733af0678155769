#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: batch groups at hidden 128 below batch
# 32, where `shape_groups` takes groups of 8 samples (batch 20: 2 groups of 10, each one
# cluster) and f16's `PersistStaticSmallH` trained the GRU faster (run.sh). Graphed training |
# forward, µs an example, bf16 on ours at forced group counts (CANDLE_RNN_PERSISTENT_GROUPS; "rule"
# the rule's), then f16 on ours and the default.
#   results/2026-11-27-h100-small-h-default/groups.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
stamp "groups: ours at each group count (bf16, f16), then the f16 default"
for s in 1,8,30,128 1,16,30,128 1,20,30,128 1,24,30,128 1,20,200,128; do
  b=$(echo $s | cut -d, -f2)
  for cell in lstm gru; do
    for g in "" 1 2 4 5 6 8; do
      [ -n "$g" ] && { [ $((b % g)) = 0 ] || continue; }
      echo "$cell [$s] groups ${g:-rule} | bf16 $(bench_us "$g" $cell $s op-bf16-persistent)"
    done
    echo "$cell [$s] f16 | ours $(bench_us "" $cell $s op-f16-persistent) | default $(bench_us "" $cell $s op-f16-default)"
  done
done | tee "$OUT/groups.txt"
stamp done
