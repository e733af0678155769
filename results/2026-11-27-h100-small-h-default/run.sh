#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: the default's choice at hidden 128 now
# that ours runs each batch group in one cluster. choose.rs's `small_h_leads_ours` hands f16
# GRUs at every batch and f16 LSTMs at batches that are multiples of 8 to cuDNN's
# `PersistStaticSmallH`, and `ours_lead_tf32` GRUs up to hidden 128 in TF32, from measurements
# before the clusters; the grid of results/2026-11-27-h100-group-clusters/ then had f16's
# default (`PersistStaticSmallH`) at 1.15-1.42x the training time of bf16's (ours) at [30, 32 |
# 128, 128]. Graphed training | forward, µs an example: ours | the default | ours, in f16 and in
# TF32, bf16's ours beside, batches 20-128 (groups of 10, 4, 6, 8 and 16 samples, one cluster
# each; batch 20's two groups were where cuDNN led before).
#   results/2026-11-27-h100-small-h-default/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
stamp "ours | the default | ours (f16, then TF32), then bf16's ours"
for s in 1,20,30,128 1,32,30,128 1,48,30,128 1,64,30,128 1,128,30,128 1,32,200,128; do
  for cell in lstm gru; do
    for p in f16 tf32; do
      echo "$cell [$s] $p | $(bench_us "" $cell $s op-$p-persistent) | $(bench_us "" $cell $s op-$p-default)" \
        "| $(bench_us "" $cell $s op-$p-persistent)"
    done
    echo "$cell [$s] bf16 | $(bench_us "" $cell $s op-bf16-persistent)"
  done
done | tee "$OUT/small-h.txt"

# The harness's backward with -DLAB_PHASES faulted at batch 4 (results/2026-11-27-h100-small-
# phases/; not at 8 or 32, nor without phases; the library's backward at group batch 4 is
# memcheck-clean): memcheck names the access.
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
PATH=$(dirname "$nvcc"):$PATH bash scripts/persistent-lab/build.sh /tmp/lab-fault b4-bwd-ph \
  -DHID=128 -DBATCH=4 -DUNITS=16 -DNBUF=2 -DLAB_BWD -DLAB_PHASES > "$OUT/lab-build.log" 2>&1
stamp "memcheck on the harness's backward with phases at batch 4"
timeout 120 "$CS" --tool memcheck /tmp/lab-fault/lab-b4-bwd-ph 1 2>&1 | head -40 | tee "$OUT/lab-fault.txt"
stamp done
