#!/usr/bin/env bash
# Which of gpu-pending2's ptb-lm branches breaks early training? PTB large on cuDNN, seed 0, one
# epoch, bf16 and TF32, with main's ptb-lm and with main + each branch (v-*.xz).
# Main's, bf16: train 570, valid 283 (an fp32 seed-0 run: 535/252); all of gpu-pending2: bf16
# 11000/2343, TF32 2741/2370.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin-bis/gpu-env.sh > $OUT/env.txt 2>&1
for v in main lookup-par fold-bias fused-head; do
  xz -dkf -T8 .devbin-bis/v-$v.xz; chmod +x .devbin-bis/v-$v
  for p in tf32 bf16; do
    timeout 45 .devbin-bis/v-$v train --config large --precision $p --epochs 1 --data data/ptb --out /tmp/O$v$p --seed 0 --rnn cudnn > $OUT/$v-$p.log 2>&1
    grep -h "^Epoch" $OUT/$v-$p.log | sed "s/^/$v $p /" | cut -c1-160
  done
done
