#!/usr/bin/env bash
# gpu-pending2: both recurrences in thread-block clusters (CANDLE_RNN_PERSISTENT_CLUSTER=2|4), the
# weight-tile fill, and in ptb-lm the folded softmax bias, the fused softmax + cross-entropy and
# the block-wide id scans. Checks, then A/B: clusters in one binary (1 = no clusters), against
# main's op (base-bench_grid: the fill) and main's ptb-lm (base-ptb-lm: all but clusters).
# BUILD.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
for f in gpu_check bench_grid ptb-lm ptb_lm_tests base-ptb-lm base-bench_grid; do xz -dkf -T8 .devbin/$f.xz; chmod +x .devbin/$f; done
date +%T
timeout 200 .devbin/ptb_lm_tests > $OUT/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|FAILED|panicked|off by" $OUT/unit.log | head -8
export CANDLE_RNN_PERSISTENT_CLUSTER
for CANDLE_RNN_PERSISTENT_CLUSTER in 4 1; do
  date +%T
  L=$OUT/persistent_check_c$CANDLE_RNN_PERSISTENT_CLUSTER.log
  timeout 150 .devbin/gpu_check --persistent > $L 2>&1; echo "cluster $CANDLE_RNN_PERSISTENT_CLUSTER check rc=$?"
  grep -c "| ok |" $L; grep -iE "fail|error|panick" $L | head -5 | cut -c1-300; grep -E "I1500 H1500 bf16 training \(" $L | cut -c1-220
done
S="--no-loop --mode lstm --shape 2,20,35,1500 --reps 20 --warmup 10 --variants op-bf16-persistent,op-f16-persistent"
for i in 1 2; do
  CANDLE_RNN_PERSISTENT_CLUSTER=1
  timeout 60 .devbin/base-bench_grid $S --json $OUT/grid_main_$i.json 2>&1 | grep -i lstm | sed "s/^/main.$i /"
  for CANDLE_RNN_PERSISTENT_CLUSTER in 1 4 2; do
    timeout 60 .devbin/bench_grid $S --json $OUT/grid_c${CANDLE_RNN_PERSISTENT_CLUSTER}_$i.json 2>&1 | grep -i lstm | sed "s/^/c$CANDLE_RNN_PERSISTENT_CLUSTER.$i /"
  done
done
date +%T
b() { local tag=$1 bin=$2; timeout 60 .devbin/$bin bench --config large --precision bf16 --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_$tag.json 2>&1 | grep -v '^{' | tail -n 1 | sed "s/^/$tag: /"; }
for i in 1 2; do
  CANDLE_RNN_PERSISTENT_CLUSTER=1; b base_$i base-ptb-lm; b folded_$i ptb-lm
  CANDLE_RNN_PERSISTENT_CLUSTER=4; b folded_c4_$i ptb-lm
done
CANDLE_RNN_PERSISTENT_CLUSTER=1
date +%T
line() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
A="--config large --precision bf16 --max-batches 60 --data data/ptb"
P=.devbin/ptb-lm
timeout 80 $P train $A --out /tmp/G --epochs 2 --max-epoch 1 > $OUT/bf16-g.log 2>&1
timeout 80 $P train $A --out /tmp/E --epochs 2 --max-epoch 1 --no-cuda-graph > $OUT/bf16-e.log 2>&1
timeout 80 $P train $A --out /tmp/R --epochs 1 --max-epoch 1 > $OUT/bf16-r1.log 2>&1
timeout 80 $P train $A --out /tmp/R --epochs 2 --max-epoch 1 --resume > $OUT/bf16-r2.log 2>&1
line $OUT/bf16-g.log > /tmp/g; line $OUT/bf16-e.log > /tmp/e; line $OUT/bf16-r1.log $OUT/bf16-r2.log > /tmp/r; cat /tmp/g
cmp -s /tmp/g /tmp/e && echo "bf16: graph = eager" || { echo "graph/eager DIFFER"; cat /tmp/e; }
cmp -s /tmp/g /tmp/r && echo "bf16: resumed = straight" || { echo "resume DIFFER"; cat /tmp/r; }
date +%T
