#!/usr/bin/env bash
# Full 55-epoch PTB large run, bf16, every default (persistent kernels, graphed), branch land4; seed $1.
set -uo pipefail
cd "$(dirname "$0")/.."
SEED=${1:-2}
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'cp /tmp/F/*.jsonl $OUT/ 2>/dev/null; tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin-l4/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm; do [ -x .devbin-l4/$f ] || { xz -dkf -T8 .devbin-l4/$f.xz; chmod +x .devbin-l4/$f; }; done
t0=$(date +%s)
.devbin-l4/ptb-lm train --config large --precision bf16 --seed $SEED --data data/ptb --out /tmp/F > $OUT/large-bf16-s$SEED.train.log 2>&1
echo "train rc=$? $(( $(date +%s)-t0 ))s"
grep -hE "^Epoch" $OUT/large-bf16-s$SEED.train.log | head -n 3 | cut -c1-150
grep -hE "^Epoch|[Tt]est" $OUT/large-bf16-s$SEED.train.log | tail -n 4
grep -hoE "[0-9]+ words/s" $OUT/large-bf16-s$SEED.train.log | tail -n 3
ls /tmp/F
