#!/usr/bin/env bash
# main dd72838 (checkpoint values staged in pinned memory, read on the writing thread): unit tests, bench, graph = eager and
# resume, then the full 55-epoch PTB large bf16 run, seed 4 (as 0cbab86 ran it: test 78.520),
# every output line stamped with the wall clock.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-s15
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'cp /tmp/F/*.jsonl $OUT/ 2>/dev/null; tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm ptb_lm_tests; do [ -x $D/$f ] || { xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; }; done
P=$D/ptb-lm
date +%T
timeout 100 $D/ptb_lm_tests > $OUT/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|FAILED|panicked" $OUT/unit.log | head -8
timeout 60 $P bench --config large --precision bf16 --batches 100 --warmup 20 --data data/ptb --json $OUT/bench.json 2>&1 | grep -v '^{' | tail -n 1
line() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
A="--config large --precision bf16 --max-batches 60 --data data/ptb"
timeout 60 $P train $A --out /tmp/G --epochs 2 --max-epoch 1 > $OUT/bf16-g.log 2>&1
timeout 60 $P train $A --out /tmp/E --epochs 2 --max-epoch 1 --no-cuda-graph > $OUT/bf16-e.log 2>&1
timeout 60 $P train $A --out /tmp/R --epochs 1 --max-epoch 1 > $OUT/bf16-r1.log 2>&1
timeout 60 $P train $A --out /tmp/R --epochs 2 --max-epoch 1 --resume > $OUT/bf16-r2.log 2>&1
line $OUT/bf16-g.log > /tmp/g; line $OUT/bf16-e.log > /tmp/e; line $OUT/bf16-r1.log $OUT/bf16-r2.log > /tmp/r; cat /tmp/g
[ -s /tmp/g ] || echo "NO EPOCH LINES"
cmp -s /tmp/g /tmp/e && echo "bf16: graph = eager" || { echo "graph/eager DIFFER"; cat /tmp/e; }
cmp -s /tmp/g /tmp/r && echo "bf16: resumed = straight" || { echo "resume DIFFER"; cat /tmp/r; }
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N | cut -c1-14)" "$l"; done; }
t0=$(date +%s)
timeout 300 $P train --config large --precision bf16 --seed 4 --data data/ptb --out /tmp/F 2>&1 | stamp > $OUT/large-bf16-s4.train.log
echo "train rc=${PIPESTATUS[0]} $(( $(date +%s)-t0 ))s"
grep -hE " Epoch" $OUT/large-bf16-s4.train.log | head -n 2 | cut -c1-165
grep -hE " Epoch|Test Perp" $OUT/large-bf16-s4.train.log | tail -n 2
head -n 2 $OUT/large-bf16-s4.train.log | cut -c1-80; tail -n 1 $OUT/large-bf16-s4.train.log
