#!/usr/bin/env bash
# per-pass-cluster (7ce20c8): clusters per pass (default forward 1, backward 2), Auto checking
# gradients, and gpu-pending2's ptb-lm (folded bias, fused softmax + cross-entropy, id scans).
# Checks, then A/B against main's op (base-bench_grid) and main's ptb-lm (base-ptb-lm). BUILD.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
for f in gpu_check bench_grid ptb-lm ptb_lm_tests base-ptb-lm base-bench_grid; do xz -dkf -T8 .devbin/$f.xz; chmod +x .devbin/$f; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.txt
date +%T
timeout 200 .devbin/ptb_lm_tests > $OUT/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|FAILED|panicked|off by" $OUT/unit.log | head -8
unset CANDLE_RNN_PERSISTENT_CLUSTER
for C in default 2; do
  date +%T
  L=$OUT/persistent_check_$C.log
  if [ $C = default ]; then timeout 150 .devbin/gpu_check --persistent > $L 2>&1; else CANDLE_RNN_PERSISTENT_CLUSTER=$C timeout 150 .devbin/gpu_check --persistent > $L 2>&1; fi
  echo "cluster $C check rc=$?"; grep -c "| ok |" $L; grep -iE "fail|error|panick" $L | head -5 | cut -c1-300; grep -E "I1500 H1500 bf16 training \(" $L | cut -c1-220
done
S="--no-loop --mode lstm --shape 2,20,35,1500 --reps 20 --warmup 10 --variants op-bf16-persistent,op-f16-persistent"
g() { local tag=$1; shift; env "$@" timeout 60 .devbin/bench_grid $S --json $OUT/grid_${tag}.json 2>&1 | grep -i lstm | sed "s/^/$tag /" | cut -d'|' -f1,7-; }
for i in 1 2; do
  timeout 60 .devbin/base-bench_grid $S --json $OUT/grid_main_$i.json 2>&1 | grep -i lstm | sed "s/^/main.$i /" | cut -d'|' -f1,7-
  g dflt.$i A=1; g c1.$i CANDLE_RNN_PERSISTENT_CLUSTER=1; g c2.$i CANDLE_RNN_PERSISTENT_CLUSTER=2
done
date +%T
b() { local tag=$1 bin=$2; shift 2; env "$@" timeout 60 .devbin/$bin bench --config large --precision bf16 --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_$tag.json 2>&1 | grep -v '^{' | tail -n 1 | sed "s/^/$tag: /"; }
for i in 1 2; do
  b base_$i base-ptb-lm A=1; b new_$i ptb-lm A=1; b new_c1_$i ptb-lm CANDLE_RNN_PERSISTENT_CLUSTER=1
done
date +%T
line() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
A="--config large --precision bf16 --max-batches 60 --data data/ptb"
P=.devbin/ptb-lm
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
