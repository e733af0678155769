#!/usr/bin/env bash
# main 0cbab86: the full 55-epoch PTB large bf16 run, every default, seed $1 (4: the seed the
# previous main ran in this session, test 78.520; the numbers should repeat bit for bit).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-s11
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
