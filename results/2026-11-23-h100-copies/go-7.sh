#!/usr/bin/env bash
# main 74d781b (row copies in words, softmax widen/narrow kernels) against a89f216: unit tests,
# gpu_check --persistent, bench alternating, graph = eager, resume, then the step's kernels.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-s10
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm base-ptb-lm bench_grid gpu_check ptb_lm_tests; do [ -x $D/$f ] || { xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; }; done
date +%T
timeout 100 $D/ptb_lm_tests > $OUT/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|FAILED|panicked" $OUT/unit.log | head -8
timeout 150 $D/gpu_check --persistent > $OUT/gpu_check_persistent.log 2>&1; echo "gpu_check --persistent rc=$?"
echo "ok rows $(grep -c '| ok |' $OUT/gpu_check_persistent.log)"; grep -E "\| FAIL|panick|^Error" $OUT/gpu_check_persistent.log | head -5 | cut -c1-300
for r in 1 2 3; do for b in base-ptb-lm ptb-lm; do
  echo -n "$b.$r: "; timeout 60 $D/$b bench --config large --precision bf16 --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_${b}_$r.json 2>&1 | grep -v '^{' | tail -n 1
done; done
$D/bench_grid --no-loop --mode lstm --shape 2,20,35,1500 --reps 20 --warmup 5 --variants op-bf16-persistent 2>&1 | tail -n 1
line() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
A="--config large --precision bf16 --max-batches 60 --data data/ptb"
P=$D/ptb-lm
timeout 60 $P train $A --out /tmp/G --epochs 2 --max-epoch 1 > $OUT/bf16-g.log 2>&1
timeout 60 $P train $A --out /tmp/E --epochs 2 --max-epoch 1 --no-cuda-graph > $OUT/bf16-e.log 2>&1
timeout 60 $P train $A --out /tmp/R --epochs 1 --max-epoch 1 > $OUT/bf16-r1.log 2>&1
timeout 60 $P train $A --out /tmp/R --epochs 2 --max-epoch 1 --resume > $OUT/bf16-r2.log 2>&1
timeout 60 $D/base-ptb-lm train $A --out /tmp/B --epochs 2 --max-epoch 1 > $OUT/bf16-base.log 2>&1
line $OUT/bf16-g.log > /tmp/g; line $OUT/bf16-e.log > /tmp/e; line $OUT/bf16-r1.log $OUT/bf16-r2.log > /tmp/r; line $OUT/bf16-base.log > /tmp/b; cat /tmp/g /tmp/b
[ -s /tmp/g ] || echo "NO EPOCH LINES"
cmp -s /tmp/g /tmp/e && echo "bf16: graph = eager" || { echo "graph/eager DIFFER"; cat /tmp/e; }
cmp -s /tmp/g /tmp/r && echo "bf16: resumed = straight" || { echo "resume DIFFER"; cat /tmp/r; }
cmp -s /tmp/g /tmp/b && echo "bf16: new = base" || echo "new and base differ (expected only if rounding changed)"
date +%T
mkdir -p $OUT/profile
CANDLE_RNN_PERSISTENT_CLUSTER=1 timeout 200 bash scripts/profile-ptb-step.sh $D/ptb-lm $OUT/profile large bf16 > /dev/null 2>&1; echo "profile rc=$?"
date +%T
