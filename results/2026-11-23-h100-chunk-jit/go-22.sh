#!/usr/bin/env bash
# main d5b06e0: the full 55-epoch PTB large bf16 run on a second seed (2), every default, every
# line stamped; the driver cache as the machine has it.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-s20
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'cp /tmp/F/*.jsonl $OUT/ 2>/dev/null; tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm; do [ -x $D/$f ] || { xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; }; done
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N | cut -c1-14)" "$l"; done; }
t0=$(date +%s.%N)
timeout 290 $D/ptb-lm train --config large --precision bf16 --seed 2 --data data/ptb --out /tmp/F 2>&1 | stamp > $OUT/large-bf16-s2.train.log
rc=${PIPESTATUS[0]}; echo "train rc=$rc $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
grep -hE " Epoch" $OUT/large-bf16-s2.train.log | head -n 2 | cut -c1-165
grep -hE " Epoch" $OUT/large-bf16-s2.train.log | tail -n 2 | cut -c1-165
grep -hE "Test Perplexity" $OUT/large-bf16-s2.train.log | tail -n 1
