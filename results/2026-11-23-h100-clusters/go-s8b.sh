#!/usr/bin/env bash
# How often does PTB large bf16 fall onto the unigram plateau (train perplexity ~695) in its
# first epochs, on the persistent kernels and on cuDNN? 6 epochs per seed, epoch lines only.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
[ -x .devbin/ptb-lm ] || { xz -dkf -T8 .devbin/ptb-lm.xz; chmod +x .devbin/ptb-lm; }
r() { timeout 75 .devbin/ptb-lm train --config large --precision bf16 --epochs 6 --data data/ptb --out /tmp/O$1$2 --seed $2 --rnn $1 > $OUT/$1-s$2.log 2>&1; grep -h "^Epoch" $OUT/$1-s$2.log | sed "s/^/$1 s$2 /" | cut -c1-110; }
for s in 1 0 3; do r persistent $s; r cudnn $s; done
