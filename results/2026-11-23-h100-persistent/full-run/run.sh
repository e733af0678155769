#!/usr/bin/env bash
# Full 55-epoch PTB large run on the persistent kernels, bf16, graphed, seed 1.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'cp /tmp/F/*.jsonl $OUT/ 2>/dev/null; tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
for f in .devbin/*.xz; do [ -f "${f%.xz}" ] || xz -dk -T8 "$f"; done
chmod +x .devbin/ptb-lm
t0=$(date +%s)
.devbin/ptb-lm train --config large --precision bf16 --rnn persistent --seed 1 --data data/ptb --out /tmp/F > $OUT/large-bf16-s1-persistent.train.log 2>&1
echo "train rc=$? $(( $(date +%s)-t0 ))s"
grep -hE "^Epoch|[Tt]est" $OUT/large-bf16-s1-persistent.train.log | tail -n 6
ls /tmp/F
