#!/usr/bin/env bash
# Branch units-per-pass 378d807 (CANDLE_RNN_PERSISTENT_UNITS = N or F,B; defaults unchanged):
# LSTM [35, 20, 2 x 1500] bf16 forward + backward per units/cluster setting, two rounds in
# alternating order; then gpu_check --persistent with 12,16 units and by default. (PTB large's
# forward does not fit in shared memory with 16 units, nor its backward with 16 units in
# clusters of 1 or 4: the 1,4 row must fall back to cuDNN; 16 units in pairs fit, 94 blocks.)
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-next3
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in units-bench_grid units-gpu_check; do xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; done
S="--no-loop --mode lstm --shape 2,20,35,1500 --reps 20 --warmup 10 --variants op-bf16-persistent"
g() { local tag=$1; shift; env "$@" timeout 60 $D/units-bench_grid $S --json $OUT/grid_$tag.json 2>&1 | grep -i lstm | sed "s/^/$tag /" | cut -d'|' -f1,7-; }
for i in 1 2; do
  g default.$i A=1
  g u12-16.$i CANDLE_RNN_PERSISTENT_UNITS=12,16
  g u12-16-c4.$i CANDLE_RNN_PERSISTENT_UNITS=12,16 CANDLE_RNN_PERSISTENT_CLUSTER=1,4
done
date +%T
for U in 12,16 default; do
  L=$OUT/persistent_check_u${U/,/-}.log
  if [ $U = default ]; then timeout 100 $D/units-gpu_check --persistent > $L 2>&1; else CANDLE_RNN_PERSISTENT_UNITS=$U timeout 100 $D/units-gpu_check --persistent > $L 2>&1; fi
  echo "units $U check rc=$? ok rows $(grep -c '| ok |' $L)"; grep -E "\| FAIL|panick|^Error" $L | head -5 | cut -c1-300
  date +%T
done
