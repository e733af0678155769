#!/usr/bin/env bash
# Branch bwd-chunk (34aeb38) against main (dd72838's binaries; candle-cudnn-rnn unchanged since
# 0cbab86): gpu_check --persistent with chunks of 64 and by default, then the LSTM op
# [35, 20, 2 x 1500] bf16 and PTB large bf16 steps, main / branch (chunks of 32) / branch
# (chunks of 64), two rounds alternating.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-next4
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in main-ptb-lm main-bench_grid chunk-ptb-lm chunk-bench_grid chunk-gpu_check; do [ -x $D/$f ] || { xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; }; done
date +%T
for C in 64 32; do
  L=$OUT/persistent_check_chunk$C.log
  CANDLE_RNN_PERSISTENT_CHUNK=$C timeout 150 $D/chunk-gpu_check --persistent > $L 2>&1
  echo "chunk $C check rc=$? ok rows $(grep -c '| ok |' $L)"; grep -E "\| FAIL|panick|^Error" $L | head -5 | cut -c1-300
done
S="--no-loop --mode lstm --shape 2,20,35,1500 --reps 20 --warmup 5 --variants op-bf16-persistent"
B="bench --config large --precision bf16 --batches 100 --warmup 20 --data data/ptb"
for r in 1 2; do
  echo -n "op main.$r: "; $D/main-bench_grid $S 2>&1 | tail -n 1
  echo -n "op chunk32.$r: "; CANDLE_RNN_PERSISTENT_CHUNK=32 $D/chunk-bench_grid $S 2>&1 | tail -n 1
  echo -n "op chunk64.$r: "; CANDLE_RNN_PERSISTENT_CHUNK=64 $D/chunk-bench_grid $S 2>&1 | tail -n 1
done
for r in 1 2; do
  echo -n "step main.$r: "; timeout 60 $D/main-ptb-lm $B --json $OUT/step_main_$r.json 2>&1 | grep -v '^{' | tail -n 1
  echo -n "step chunk32.$r: "; CANDLE_RNN_PERSISTENT_CHUNK=32 timeout 60 $D/chunk-ptb-lm $B --json $OUT/step_c32_$r.json 2>&1 | grep -v '^{' | tail -n 1
  echo -n "step chunk64.$r: "; CANDLE_RNN_PERSISTENT_CHUNK=64 timeout 60 $D/chunk-ptb-lm $B --json $OUT/step_c64_$r.json 2>&1 | grep -v '^{' | tail -n 1
done
date +%T
