#!/usr/bin/env bash
# Branch land3 (main 9cfbde7 + fast-epochs 5d3147f + auto-poison aa3bd6b). First the full
# 55-epoch PTB large bf16 run, seed 2, every default, as go-e.sh ran it on land2 (valid then in
# f32 on a rebuilt model, checkpoints written in line): training is untouched, so the train
# lines and the test perplexity should repeat; only valid's numbers (now bf16) and the time
# change. Then unit tests, graph = eager and resume, gpu_check --persistent (default, then 4).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-l3
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'cp /tmp/F/*.jsonl $OUT/ 2>/dev/null; tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm ptb_lm_tests gpu_check; do xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; done
t0=$(date +%s)
timeout 330 $D/ptb-lm train --config large --precision bf16 --seed 2 --data data/ptb --out /tmp/F > $OUT/large-bf16-s2.train.log 2>&1
echo "train rc=$? $(( $(date +%s)-t0 ))s"
grep -hE "^Epoch" $OUT/large-bf16-s2.train.log | head -n 2 | cut -c1-150
grep -hE "^Epoch|Test Perp" $OUT/large-bf16-s2.train.log | tail -n 2
date +%T
timeout 100 $D/ptb_lm_tests > $OUT/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|FAILED|panicked" $OUT/unit.log | head -8
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
for C in 4 default; do
  L=$OUT/persistent_check_$C.log
  if [ $C = default ]; then timeout 100 $D/gpu_check --persistent > $L 2>&1; else CANDLE_RNN_PERSISTENT_CLUSTER=$C timeout 100 $D/gpu_check --persistent > $L 2>&1; fi
  echo "cluster $C check rc=$? ok rows $(grep -c '| ok |' $L)"; grep -iE "fail|error|panick" $L | head -5 | cut -c1-300; grep "f16 training, Auto" $L | cut -c1-200
  date +%T
done
