#!/usr/bin/env bash
# Branch land4 (main 5d3147f + auto-poison 1b24a2c): gpu_check --persistent with clusters of 4
# asked (where Auto had taken cuDNN's racy persistent backward at f16 batch 1) and with the
# default; the whole gpu_check (cuDNN paths, Auto for every mode); ptb-lm bench twice.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-l4
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm gpu_check; do xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; done
date +%T
for C in 4 default; do
  L=$OUT/persistent_check_$C.log
  if [ $C = default ]; then timeout 100 $D/gpu_check --persistent > $L 2>&1; else CANDLE_RNN_PERSISTENT_CLUSTER=$C timeout 100 $D/gpu_check --persistent > $L 2>&1; fi
  echo "cluster $C check rc=$? ok rows $(grep -c '| ok |' $L)"; grep -iE "fail|error|panick" $L | head -5 | cut -c1-300; grep "B1 T3 I100 H200 f16 training, Auto" $L | cut -c1-200
  date +%T
done
timeout 200 $D/gpu_check --json $OUT/gpu_check.json > $OUT/gpu_check.log 2>&1; echo "gpu_check rc=$? ok rows $(grep -c '| ok |' $OUT/gpu_check.log)"; grep -iE "fail|error|panick" $OUT/gpu_check.log | head -5 | cut -c1-300
date +%T
for i in 1 2; do timeout 60 $D/ptb-lm bench --config large --precision bf16 --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_$i.json 2>&1 | grep -v '^{' | tail -n 1; done
date +%T
