#!/usr/bin/env bash
# On the GPU machine (run 2026-12-01, logs in logs/): the half-precision rules (`choose.rs`'s
# `ours_lead` and the rules it names) past the shapes they were measured on. TF32's sweep
# (`results/2026-12-01-h200-tf32-wide-rules/`) found ours 1.1-2.4x faster than the kernels the
# rule had left calls on, at batches past 128 and at hidden 768-1024; most half-precision rules
# were set on an H100 in November, before the wgmma kernels and the batch groups. Each row:
# ours (`op-f16-persistent`) beside the default (`op-f16-default`, with the kernel it picked),
# training with the input's gradient then the forward, µs an example, graphed unless said.
# DIR built as `scripts/devbin.sh DIR` builds it:
#   1. (layers) one layer at seq 30, hidden 128-1024, batches 48-256 (OUT/layers.log).
#   2. (stacks) two and three layers at seq 30, hidden 128-1024, batches 48-256
#      (OUT/stacks.log).
#   3. (long) one layer and three at seq 200 (OUT/long.log).
#   4. (eager) `layers`' shapes launched eagerly (`Launch::Eager`, the module's default;
#      OUT/eager.log).
#   5. (bf16) `layers`' shapes in bf16, whose cuDNN has no persistent kernels
#      (OUT/bf16.log).
#   6. (summary) the rows where ours took under 0.95x the default's time while the default ran
#      cuDNN, per phase (OUT/summary.log).
#   results/2026-12-01-h200-half-rule-sweep/run.sh DIR OUT [layers|stacks|long|eager|bf16|summary]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-layers}
source scripts/on-gpu.sh
layer_specs=$(for c in lstm gru; do for h in 128 256 512 768 1024; do for b in 48 64 96 160 192 256; do
  echo "$c:1,$b,30,$h"; done; done; done)
stack_specs=$(for c in lstm gru; do
  for h in 256 512 1024; do for b in 64 192 256; do echo "$c:2,$b,30,$h"; done; done
  for h in 128 256 512 1024; do for b in 48 64 96 192 256; do echo "$c:3,$b,30,$h"; done; done; done)
long_specs=$(for c in lstm gru; do for sh in 1,64,200,256 1,256,200,256 1,64,200,512 1,256,200,512 \
  1,64,200,1024 1,256,200,1024 3,64,200,512 3,256,200,512; do echo "$c:$sh"; done; done)
for part in $parts; do
  case $part in
    layers) stamp "layers"; beside_default f16 "$layer_specs" --graph | tee "$OUT/layers.log" ;;
    stacks) stamp "stacks"; beside_default f16 "$stack_specs" --graph | tee "$OUT/stacks.log" ;;
    long) stamp "long"; beside_default f16 "$long_specs" --graph | tee "$OUT/long.log" ;;
    eager) stamp "eager"; beside_default f16 "$layer_specs" "" | tee "$OUT/eager.log" ;;
    bf16) stamp "bf16"; beside_default bf16 "$layer_specs" --graph | tee "$OUT/bf16.log" ;;
    summary)
      stamp "summary"
      python3 "$here/summary.py" "$OUT"/{layers,stacks,long,eager,bf16}.log 2>&1 | tee "$OUT/summary.log"
      ;;
  esac
done
