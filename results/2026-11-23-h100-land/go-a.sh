#!/usr/bin/env bash
# main 1adf1c8 (the op's clusters with main's ptb-lm): unit tests on the GPU, bench, graph =
# eager and resume; then the bisect of gpu-pending2's ptb-lm branches (v-*: main 1357291 + one
# branch each): PTB large on cuDNN, seed 0, one epoch, TF32 and bf16.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-next
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm ptb_lm_tests v-lookup-par v-fold-bias v-fused-head; do xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; done
date +%T
timeout 100 $D/ptb_lm_tests > $OUT/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|FAILED|panicked" $OUT/unit.log | head -5
for i in 1 2; do timeout 60 $D/ptb-lm bench --config large --precision bf16 --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_$i.json 2>&1 | grep -v '^{' | tail -n 1; done
line() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
A="--config large --precision bf16 --max-batches 60 --data data/ptb"
timeout 60 $D/ptb-lm train $A --out /tmp/G --epochs 2 --max-epoch 1 > $OUT/bf16-g.log 2>&1
timeout 60 $D/ptb-lm train $A --out /tmp/E --epochs 2 --max-epoch 1 --no-cuda-graph > $OUT/bf16-e.log 2>&1
timeout 60 $D/ptb-lm train $A --out /tmp/R --epochs 1 --max-epoch 1 > $OUT/bf16-r1.log 2>&1
timeout 60 $D/ptb-lm train $A --out /tmp/R --epochs 2 --max-epoch 1 --resume > $OUT/bf16-r2.log 2>&1
line $OUT/bf16-g.log > /tmp/g; line $OUT/bf16-e.log > /tmp/e; line $OUT/bf16-r1.log $OUT/bf16-r2.log > /tmp/r; cat /tmp/g
[ -s /tmp/g ] || echo "NO EPOCH LINES"
cmp -s /tmp/g /tmp/e && echo "bf16: graph = eager" || { echo "graph/eager DIFFER"; cat /tmp/e; }
cmp -s /tmp/g /tmp/r && echo "bf16: resumed = straight" || { echo "resume DIFFER"; cat /tmp/r; }
date +%T
for v in ptb-lm v-lookup-par v-fold-bias v-fused-head; do
  for p in tf32 bf16; do
    timeout 45 $D/$v train --config large --precision $p --epochs 1 --data data/ptb --out /tmp/O$v$p --seed 0 --rnn cudnn > $OUT/bisect-$v-$p.log 2>&1
    grep -h "^Epoch" $OUT/bisect-$v-$p.log | sed "s/^/$v $p /" | cut -c1-160
  done
done
# Is a cuDNN TF32 run repeatable bit for bit? (If not, one seed's collapse says little.)
timeout 45 $D/ptb-lm train --config large --precision tf32 --epochs 1 --data data/ptb --out /tmp/Oagain --seed 0 --rnn cudnn > $OUT/bisect-again-tf32.log 2>&1
cmp -s <(grep -h "^Epoch" $OUT/bisect-ptb-lm-tf32.log | sed 's/ wps: [0-9]*//') <(grep -h "^Epoch" $OUT/bisect-again-tf32.log | sed 's/ wps: [0-9]*//') && echo "tf32 repeat: identical" || { echo "tf32 repeat DIFFERS"; grep -h "^Epoch" $OUT/bisect-again-tf32.log | cut -c1-160; }
date +%T
