#!/usr/bin/env bash
# How often does main's ptb-lm blow up in PTB large's first epochs, by precision? cuDNN, seeds
# 1-4, 2 epochs each, TF32 and bf16 (fp32 seeds 0-4 trained normally in results/ptb/).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-next
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
[ -x $D/ptb-lm ] || { xz -dkf -T8 $D/ptb-lm.xz; chmod +x $D/ptb-lm; }
for s in 1 2 3 4; do
  for p in tf32 bf16; do
    timeout 60 $D/ptb-lm train --config large --precision $p --epochs 2 --data data/ptb --out /tmp/O$p$s --seed $s --rnn cudnn > $OUT/main-cudnn-$p-s$s.log 2>&1
    grep -h "^Epoch" $OUT/main-cudnn-$p-s$s.log | sed "s/^/$p s$s /" | cut -c1-160
  done
done
