#!/usr/bin/env bash
# main 7e47bb7: a full 55-epoch PTB large bf16 run, every default, seed $1 (4 was chosen ahead).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-next2
SEED=${1:-4}
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'cp /tmp/F/*.jsonl $OUT/ 2>/dev/null; tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
[ -x $D/ptb-lm ] || { xz -dkf -T8 $D/ptb-lm.xz; chmod +x $D/ptb-lm; }
t0=$(date +%s)
timeout 400 $D/ptb-lm train --config large --precision bf16 --seed $SEED --data data/ptb --out /tmp/F > $OUT/large-bf16-s$SEED.train.log 2>&1
echo "train rc=$? $(( $(date +%s)-t0 ))s"
grep -hE "^Epoch" $OUT/large-bf16-s$SEED.train.log | head -n 2 | cut -c1-150
grep -hE "^Epoch|Test Perp" $OUT/large-bf16-s$SEED.train.log | tail -n 2
