#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: clusters splitting the forward's
# recurrent product (CANDLE_RNN_PERSISTENT_CLUSTER=F,B) at hidden 1024 past batch 32, where
# every block reads all of a step's h_{t-1} (256 KB at batch 128) and cuDNN's Standard leads
# ours; kernel.rs's `shape_clusters` keeps the forward unclustered, measured at batch 32 only.
# Graphed training | forward, µs an example, bf16.
#   results/2026-11-27-h100-wide-clusters/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
p=op-bf16-persistent
stamp "clusters F,B (forward, backward; empty: the rule's)"
p=op-bf16-persistent
for cell in lstm gru; do
  echo "$cell [1,128,30,1024] Standard | $(bench_us "" $cell 1,128,30,1024 op-bf16-standard)"
  for c in "" 1,2 2,2 4,2 2,4 4,4 2,1 8,2; do
    echo "$cell [1,128,30,1024] CLUSTER=$c | $(eval "CANDLE_RNN_PERSISTENT_CLUSTER=$c bench_us '' $cell 1,128,30,1024 $p")"
  done
  for c in 2,2 4,2; do
    echo "$cell [1,128,30,1024] GROUPS=2 CLUSTER=$c | $(eval "CANDLE_RNN_PERSISTENT_CLUSTER=$c bench_us 2 $cell 1,128,30,1024 $p")"
  done
  echo "$cell [1,64,30,1024] Standard | $(bench_us "" $cell 1,64,30,1024 op-bf16-standard)"
  for c in "" 2,2 4,2 1,1; do
    echo "$cell [1,64,30,1024] CLUSTER=$c | $(eval "CANDLE_RNN_PERSISTENT_CLUSTER=$c bench_us '' $cell 1,64,30,1024 $p")"
  done
done | tee "$OUT/clusters.txt"
stamp done
