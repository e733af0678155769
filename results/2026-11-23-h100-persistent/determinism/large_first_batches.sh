#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
for f in .devbin/*.xz; do [ -f "${f%.xz}" ] || xz -dk -T8 "$f"; done
chmod +x .devbin/ptb-lm
B=.devbin/ptb-lm
run() { n=$1; shift; timeout 60 $B train --precision bf16 --max-batches 40 --data data/ptb --epochs 1 --no-cuda-graph --out /tmp/Z$n "$@" > $OUT/$n.log 2>&1; echo "$n: $(grep -h '^Epoch' $OUT/$n.log | sed 's/ wps: [0-9]*//') $(grep -h 'perplexity' $OUT/$n.log | head -2 | tr '\n' ' ')"; }
for r in cudnn persistent; do
  run L-$r --config large --rnn $r
  run Lk1-$r --config large --rnn $r --keep-prob 1.0
  run Lh650-$r --config large --rnn $r --hidden-size 650
  run Mk35-$r --config medium --rnn $r --keep-prob 0.35
  run L1layer-$r --config large --rnn $r --num-layers 1
done
