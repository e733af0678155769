#!/usr/bin/env bash
# issue 15: f16 steps graphed (loss scale and overflow skip on the device): unit test on the GPU,
# graph = eager and resume exact on PTB large f16, and the bench
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm ptb_lm_tests; do xz -dkf -T8 .devbin/$f.xz; chmod +x .devbin/$f; done
date +%T
timeout 150 .devbin/ptb_lm_tests graphed_steps_equal_eager_steps > $OUT/unit_graphed.log 2>&1; echo "unit graphed rc=$?"; grep -E "test result|panicked|FAILED" $OUT/unit_graphed.log | head -5
B=.devbin/ptb-lm
line() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
for r in cudnn persistent; do
  A="--config large --precision f16 --rnn $r --max-batches 60 --data data/ptb"
  timeout 80 $B train $A --out /tmp/G$r --epochs 2 --max-epoch 1 > $OUT/f16-$r-g.log 2>&1
  timeout 80 $B train $A --out /tmp/E$r --epochs 2 --max-epoch 1 --no-cuda-graph > $OUT/f16-$r-e.log 2>&1
  timeout 80 $B train $A --out /tmp/R$r --epochs 1 --max-epoch 1 > $OUT/f16-$r-r1.log 2>&1
  timeout 80 $B train $A --out /tmp/R$r --epochs 2 --max-epoch 1 --resume > $OUT/f16-$r-r2.log 2>&1
  line $OUT/f16-$r-g.log > /tmp/g; line $OUT/f16-$r-e.log > /tmp/e; line $OUT/f16-$r-r1.log $OUT/f16-$r-r2.log > /tmp/r; cat /tmp/g
  cmp -s /tmp/g /tmp/e && echo "f16 $r: graph = eager" || { echo "f16 $r: graph/eager DIFFER"; cat /tmp/e; }
  cmp -s /tmp/g /tmp/r && echo "f16 $r: resumed = straight" || { echo "f16 $r: resume DIFFER"; cat /tmp/r; }
done
date +%T
for v in f16:cudnn f16:persistent bf16:persistent bf16:cudnn tf32:cudnn; do p=${v%%:*} r=${v#*:}
  timeout 80 $B bench --config large --precision $p --rnn $r --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_large_${p}_$r.json 2>&1 | grep -v '^{' | tail -n 1; done
timeout 80 $B bench --config large --precision f16 --rnn persistent --batches 100 --warmup 20 --data data/ptb --no-cuda-graph --json $OUT/bench_large_f16_persistent_eager.json 2>&1 | grep -v '^{' | tail -n 1
date +%T
