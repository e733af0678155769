#!/usr/bin/env bash
# Branch timing-probe2 (main 8371507 + stderr timings, inside the checkpoint's encode too).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-s14
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
[ -x $D/probe-ptb-lm ] || { xz -dkf -T8 $D/probe-ptb-lm.xz; chmod +x $D/probe-ptb-lm; }
P=$D/probe-ptb-lm
timeout 150 $P train --config large --precision bf16 --seed 4 --max-max-epoch 3 --data data/ptb --out /tmp/W > $OUT/warm.log 2>&1
grep -E "TIMING|ENCODE|COPY|^Epoch" $OUT/warm.log | cut -c1-100
