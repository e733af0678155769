#!/usr/bin/env bash
# main 7e47bb7 (checkpoints serialized on their own thread, eval reads the test stream in windows): unit tests on the GPU, ptb-lm bench
# (large bf16 twice, medium bf16), graph = eager and resume, then where PTB large's bf16 step
# spends its time (ncu, one metric per kernel: scripts/profile-ptb-step.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-next2
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm ptb_lm_tests; do xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; done
date +%T
timeout 100 $D/ptb_lm_tests > $OUT/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|FAILED|panicked" $OUT/unit.log | head -8
for c in large large medium; do timeout 60 $D/ptb-lm bench --config $c --precision bf16 --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_${c}_$RANDOM.json 2>&1 | grep -v '^{' | tail -n 1; done
line() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
A="--config large --precision bf16 --max-batches 60 --data data/ptb"
P=$D/ptb-lm
timeout 60 $P train $A --out /tmp/G --epochs 2 --max-epoch 1 > $OUT/bf16-g.log 2>&1
timeout 60 $P train $A --out /tmp/E --epochs 2 --max-epoch 1 --no-cuda-graph > $OUT/bf16-e.log 2>&1
timeout 60 $P train $A --out /tmp/R --epochs 1 --max-epoch 1 > $OUT/bf16-r1.log 2>&1
timeout 60 $P train $A --out /tmp/R --epochs 2 --max-epoch 1 --resume > $OUT/bf16-r2.log 2>&1
line $OUT/bf16-g.log > /tmp/g; line $OUT/bf16-e.log > /tmp/e; line $OUT/bf16-r1.log $OUT/bf16-r2.log > /tmp/r; cat /tmp/g
[ -s /tmp/g ] || echo "NO EPOCH LINES"
cmp -s /tmp/g /tmp/e && echo "bf16: graph = eager" || { echo "graph/eager DIFFER"; cat /tmp/e; }
cmp -s /tmp/g /tmp/r && echo "bf16: resumed = straight" || { echo "resume DIFFER"; cat /tmp/r; }
date +%T
mkdir -p $OUT/profile
timeout 240 bash scripts/profile-ptb-step.sh $D/ptb-lm $OUT/profile large bf16 | head -30
date +%T
timeout 120 $D/ptb-lm eval --checkpoint /tmp/G --split test --data data/ptb 2>&1 | tail -n 2   # the windowed test pass of the 2-epoch checkpoint
