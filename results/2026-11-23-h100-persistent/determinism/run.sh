#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
for f in .devbin/*.xz; do [ -f "${f%.xz}" ] || xz -dk -T8 "$f"; done
chmod +x .devbin/ptb-lm .devbin/gpu_check
timeout 200 .devbin/gpu_check --persistent > $OUT/persistent_check.log 2>&1; echo "check rc=$?"; grep -cE "\| ok \|$" $OUT/persistent_check.log; grep -E "FAIL|rror|twice|p=0.5" $OUT/persistent_check.log | cut -c1-300
B=.devbin/ptb-lm
run() { n=$1; shift; timeout 60 $B train --precision bf16 --max-batches 200 --data data/ptb --epochs 1 --out /tmp/Z$n "$@" > $OUT/$n.log 2>&1; echo "$n: $(grep -h '^Epoch' $OUT/$n.log | sed 's/ wps: [0-9]*//')"; }
for r in cudnn persistent; do for k in e1 e2; do run M-$r-$k --config medium --rnn $r --no-cuda-graph; done; run M-$r-g --config medium --rnn $r; done
