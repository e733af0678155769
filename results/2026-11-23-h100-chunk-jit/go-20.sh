#!/usr/bin/env bash
# main + forward weight tiles in registers, cluster sums pushed (remote stores) against
# 1fe8c8f: unit tests, gpu_check --persistent (default, and clusters 2 / 1), graph = eager,
# resume, LSTM op and PTB large / medium steps old/new alternating; then the full 55-epoch PTB large bf16 run, seed 4, on an EMPTY
# driver cache (as a fresh machine), every line stamped.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-s20
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'cp /tmp/F/*.jsonl $OUT/ 2>/dev/null; tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm ptb-lm-tests gpu_check bench_grid old-ptb-lm old-bench_grid; do [ -x $D/$f ] || { xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; }; done
date +%T
timeout 120 $D/ptb-lm-tests > $OUT/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|FAILED|panicked" $OUT/unit.log | head -8
for C in default 2 1; do
  L=$OUT/persistent_check_c$C.log
  if [ $C = default ]; then timeout 150 $D/gpu_check --persistent > $L 2>&1; else CANDLE_RNN_PERSISTENT_CLUSTER=$C timeout 150 $D/gpu_check --persistent > $L 2>&1; fi
  echo "clusters $C check rc=$? ok rows $(grep -c '| ok |' $L)"; grep -E "\| FAIL|panick|^Error" $L | head -5 | cut -c1-300
done
P=$D/ptb-lm
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
S="--no-loop --mode lstm --shape 2,20,35,1500 --reps 20 --warmup 5 --variants op-bf16-persistent"
for r in 1 2; do
  echo -n "op old.$r: "; $D/old-bench_grid $S 2>&1 | tail -n 1
  echo -n "op new.$r: "; $D/bench_grid $S 2>&1 | tail -n 1
done
for c in large medium; do
  B="bench --config $c --precision bf16 --batches 100 --warmup 20 --data data/ptb"
  for r in 1 2; do
    echo -n "step $c old.$r: "; timeout 60 $D/old-ptb-lm $B --json $OUT/step_${c}_old_$r.json 2>&1 | grep -v '^{' | tail -n 1
    echo -n "step $c new.$r: "; timeout 60 $D/ptb-lm $B --json $OUT/step_${c}_new_$r.json 2>&1 | grep -v '^{' | tail -n 1
  done
done
date +%T
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N | cut -c1-14)" "$l"; done; }
export CUDA_CACHE_PATH=$(mktemp -d)
t0=$(date +%s.%N)
timeout 290 $D/ptb-lm train --config large --precision bf16 --seed 4 --data data/ptb --out /tmp/F 2>&1 | stamp > $OUT/large-bf16-s4.train.log
rc=${PIPESTATUS[0]}; echo "train rc=$rc $(awk "BEGIN{print $(date +%s.%N) - $t0}") s (empty driver cache at the start)"
grep -hE " Epoch" $OUT/large-bf16-s4.train.log | head -n 2 | cut -c1-165
grep -hE " Epoch" $OUT/large-bf16-s4.train.log | tail -n 2 | cut -c1-165
grep -hiE "test perplexity|Test" $OUT/large-bf16-s4.train.log | tail -n 2
date +%T
