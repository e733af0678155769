#!/usr/bin/env bash
# main f988ad7 (forward copies h in parts, outputs stored after the barrier's arrival; driver-
# cache children) against bwd-chunk's binaries (the main before): unit tests, gpu_check
# --persistent with clusters by default / 2 / 1, graph = eager and resume, LSTM op and PTB
# large step old/new alternating, then backward cluster variants in the harness.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-s17
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'rm -f $OUT/*.out; tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm ptb-lm-tests gpu_check bench_grid old-ptb-lm old-bench_grid $(cd $D; ls lab-*.xz | sed "s/.xz$//"); do [ -x $D/$f ] || { xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; }; done
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
B="bench --config large --precision bf16 --batches 100 --warmup 20 --data data/ptb"
for r in 1 2; do
  echo -n "op old.$r: "; $D/old-bench_grid $S 2>&1 | tail -n 1
  echo -n "op new.$r: "; $D/bench_grid $S 2>&1 | tail -n 1
done
for r in 1 2; do
  echo -n "step old.$r: "; timeout 60 $D/old-ptb-lm $B --json $OUT/step_old_$r.json 2>&1 | grep -v '^{' | tail -n 1
  echo -n "step new.$r: "; timeout 60 $P $B --json $OUT/step_new_$r.json 2>&1 | grep -v '^{' | tail -n 1
done
for r in 1 2; do
  for v in bwd bwd-cl3 bwd-cl4u13 bwd-cl4u13c32 bwd-cl4; do echo -n "lab $v.$r: "; timeout 30 $D/lab-$v 30 $OUT/$v.out $OUT/bwd.out 2>&1 | tail -n +1 | grep -vE "config|output mean" | sed 's/compare with [^:]*: //' | tr '\n' ' '; echo; done
done
for v in bwd-ph bwd-cl3-ph bwd-cl4u13-ph new-ph; do echo "== $v"; timeout 30 $D/lab-$v 10 2>&1 | grep -v "output mean"; done
date +%T
