#!/usr/bin/env bash
# Is the early collapse onto the unigram plateau new (main's ptb-lm, cuDNN bf16, seeds 0 and 1)
# and is it bf16's (new ptb-lm, TF32, seeds 0 and 1)? 3 epochs each.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm base-ptb-lm; do xz -dkf -T8 .devbin/$f.xz; chmod +x .devbin/$f; done
r() { local bin=$1 prec=$2 s=$3; timeout 60 .devbin/$bin train --config large --precision $prec --epochs 3 --data data/ptb --out /tmp/O$bin$prec$s --seed $s --rnn cudnn > $OUT/$bin-$prec-s$s.log 2>&1; grep -h "^Epoch" $OUT/$bin-$prec-s$s.log | sed "s/^/$bin $prec s$s /" | cut -c1-160; }
for s in 0 1; do r base-ptb-lm bf16 $s; r ptb-lm tf32 $s; done
