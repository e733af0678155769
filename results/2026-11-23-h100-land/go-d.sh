#!/usr/bin/env bash
# Branch land2 (main 582bfa5 + lookup-par + fused-head (fold-bias) + cluster-fit + GPU test
# claims): unit tests on the GPU, gpu_check --persistent with the default clusters and with 4
# asked (each pass must fall back when its clusters do not all fit), LSTM bench, ptb-lm bench
# against main 1adf1c8's ptb-lm (base-ptb-lm) in alternating order, graph = eager, resume.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-l2
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm ptb_lm_tests gpu_check bench_grid base-ptb-lm; do xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.txt
date +%T
timeout 120 $D/ptb_lm_tests > $OUT/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|FAILED|panicked" $OUT/unit.log | head -8
for C in default 4; do
  L=$OUT/persistent_check_$C.log
  if [ $C = default ]; then timeout 150 $D/gpu_check --persistent > $L 2>&1; else CANDLE_RNN_PERSISTENT_CLUSTER=$C timeout 150 $D/gpu_check --persistent > $L 2>&1; fi
  echo "cluster $C check rc=$? ok rows $(grep -c '| ok |' $L)"; grep -iE "fail|error|panick" $L | head -5 | cut -c1-300
  date +%T
done
S="--no-loop --mode lstm --shape 2,20,35,1500 --reps 20 --warmup 10 --variants op-bf16-persistent"
for C in x 4 1 x; do
  if [ $C = x ]; then timeout 60 $D/bench_grid $S --json $OUT/grid_default_$RANDOM.json 2>&1 | grep -i lstm | sed "s/^/default /" | cut -d'|' -f1,7-
  else CANDLE_RNN_PERSISTENT_CLUSTER=$C timeout 60 $D/bench_grid $S --json $OUT/grid_c$C.json 2>&1 | grep -i lstm | sed "s/^/c$C /" | cut -d'|' -f1,7-; fi
done
date +%T
b() { local tag=$1 bin=$2; timeout 60 $D/$bin bench --config large --precision bf16 --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_$tag.json 2>&1 | grep -v '^{' | tail -n 1 | sed "s/^/$tag: /"; }
for i in 1 2; do b main_$i base-ptb-lm; b land2_$i ptb-lm; done
date +%T
line() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
A="--config large --precision bf16 --max-batches 60 --data data/ptb"
P=$D/ptb-lm
timeout 80 $P train $A --out /tmp/G --epochs 2 --max-epoch 1 > $OUT/bf16-g.log 2>&1
timeout 80 $P train $A --out /tmp/E --epochs 2 --max-epoch 1 --no-cuda-graph > $OUT/bf16-e.log 2>&1
timeout 80 $P train $A --out /tmp/R --epochs 1 --max-epoch 1 > $OUT/bf16-r1.log 2>&1
timeout 80 $P train $A --out /tmp/R --epochs 2 --max-epoch 1 --resume > $OUT/bf16-r2.log 2>&1
head -1 $OUT/bf16-g.log | cut -c1-150
line $OUT/bf16-g.log > /tmp/g; line $OUT/bf16-e.log > /tmp/e; line $OUT/bf16-r1.log $OUT/bf16-r2.log > /tmp/r; cat /tmp/g
[ -s /tmp/g ] || echo "NO EPOCH LINES"
cmp -s /tmp/g /tmp/e && echo "bf16: graph = eager" || { echo "graph/eager DIFFER"; cat /tmp/e; }
cmp -s /tmp/g /tmp/r && echo "bf16: resumed = straight" || { echo "resume DIFFER"; cat /tmp/r; }
date +%T
