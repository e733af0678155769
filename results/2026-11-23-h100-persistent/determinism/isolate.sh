#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
for f in .devbin/*.xz; do [ -f "${f%.xz}" ] || xz -dk -T8 "$f"; done
chmod +x .devbin/ptb-lm
B=.devbin/ptb-lm
run() { n=$1; shift; timeout 60 $B train --precision bf16 --max-batches 200 --data data/ptb --epochs 1 --no-cuda-graph --config medium --rnn persistent --out /tmp/Z$n "$@" > $OUT/$n.log 2>&1; echo "$n: $(grep -h '^Epoch' $OUT/$n.log | sed 's/ wps: [0-9]*//')"; }
for k in a b; do run nodrop-$k --keep-prob 1.0; done
for k in a b; do run onelayer-$k --num-layers 1; done
for k in a b; do run f16-$k --precision f16; done
for k in a b; do run b5-$k --max-batches 5; done
