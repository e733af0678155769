#!/usr/bin/env bash
# Branch timing-probe (main 0cbab86 + stderr timings): where a run's time goes between passes,
# with the driver's compile cache warm, then with it off (CUDA_CACHE_DISABLE=1: every PTX module
# compiled by the driver at load, as on a fresh machine).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-s12
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
[ -x $D/probe-ptb-lm ] || { xz -dkf -T8 $D/probe-ptb-lm.xz; chmod +x $D/probe-ptb-lm; }
P=$D/probe-ptb-lm
timeout 120 $P train --config large --precision bf16 --seed 4 --max-max-epoch 1 --max-batches 30 --data data/ptb --out /tmp/W0 > $OUT/warmup.log 2>&1
timeout 150 $P train --config large --precision bf16 --seed 4 --max-max-epoch 3 --data data/ptb --out /tmp/W > $OUT/warm.log 2>&1
grep -E "TIMING|PASS|^Epoch|Test" $OUT/warm.log | cut -c1-100
echo "--- cache off"
CUDA_CACHE_DISABLE=1 timeout 150 $P train --config large --precision bf16 --seed 4 --max-max-epoch 1 --max-batches 30 --data data/ptb --out /tmp/C > $OUT/cold.log 2>&1
grep -E "TIMING|PASS|Test" $OUT/cold.log | cut -c1-100
