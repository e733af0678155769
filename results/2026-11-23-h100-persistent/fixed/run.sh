#!/usr/bin/env bash
# After the fix of the dropout counter race: checks, and medium persistent runs reproducible
# (eager twice, graph), then the PTB bench (bf16, persistent and cuDNN).
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
for f in .devbin/*.xz; do [ -f "${f%.xz}" ] || xz -dk -T8 "$f"; done
chmod +x .devbin/ptb-lm .devbin/gpu_check
timeout 200 .devbin/gpu_check --persistent > $OUT/persistent_check.log 2>&1; echo "check rc=$?"; grep -cE "\| ok \|$" $OUT/persistent_check.log; grep -E "FAIL|rror|twice|p=0.5" $OUT/persistent_check.log | cut -c1-300
B=.devbin/ptb-lm
line() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
for v in e1:--no-cuda-graph e2:--no-cuda-graph g1:; do n=${v%%:*}; f=${v#*:}
  timeout 60 $B train --config medium --precision bf16 --rnn persistent --max-batches 200 --data data/ptb --epochs 1 --out /tmp/M$n $f > $OUT/m-$n.log 2>&1; echo "medium $n: $(line $OUT/m-$n.log)"; done
A="--config large --precision bf16 --rnn persistent --max-batches 60 --data data/ptb"
timeout 60 $B train $A --out /tmp/Lg --epochs 2 --max-epoch 1 > $OUT/l-g.log 2>&1
timeout 60 $B train $A --out /tmp/Le --epochs 2 --max-epoch 1 --no-cuda-graph > $OUT/l-e.log 2>&1
timeout 60 $B train $A --out /tmp/Lr --epochs 1 --max-epoch 1 > $OUT/l-r1.log 2>&1
timeout 60 $B train $A --out /tmp/Lr --epochs 2 --max-epoch 1 --resume > $OUT/l-r2.log 2>&1
line $OUT/l-g.log > /tmp/g; line $OUT/l-e.log > /tmp/e; line $OUT/l-r1.log $OUT/l-r2.log > /tmp/r; cat /tmp/g
cmp -s /tmp/g /tmp/e && echo "large persistent: graph = eager" || { echo "graph/eager DIFFER"; cat /tmp/e; }
cmp -s /tmp/g /tmp/r && echo "large persistent: resumed = straight" || { echo "resume DIFFER"; cat /tmp/r; }
for r in cudnn persistent; do timeout 60 $B bench --config large --precision bf16 --rnn $r --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_large_bf16_$r.json 2>&1 | grep -v '^{' | tail -n 1; done
