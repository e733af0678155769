#!/usr/bin/env bash
# Branch vector-axpy 4158428 (the optimizer's update with a half copy, eight elements per thread):
# its ptb-lm unit tests on the GPU (aligned_and_unaligned_updates_agree_bit_for_bit among them),
# then ptb-lm bench large bf16 against main fbe5a38's binary (base-ptb-lm), alternating, 3 rounds.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-next3
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in vaxpy-ptb-lm vaxpy-ptb_lm_tests base-ptb-lm; do xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; done
timeout 100 $D/vaxpy-ptb_lm_tests > $OUT/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|FAILED|panicked" $OUT/unit.log | head -8
b() { timeout 60 $D/$2 bench --config large --precision bf16 --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_$1.json 2>&1 | grep -v '^{' | tail -n 1 | sed "s/^/$1: /"; }
for i in 1 2 3; do b main_$i base-ptb-lm; b vaxpy_$i vaxpy-ptb-lm; done
date +%T
