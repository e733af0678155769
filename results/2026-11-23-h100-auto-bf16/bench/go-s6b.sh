#!/usr/bin/env bash
# ptb-lm bench (default --rnn auto, graphed) beside scripts/torch_reference.py --ptb large, one command.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
[ -x .devbin/ptb-lm ] || { xz -dkf -T8 .devbin/ptb-lm.xz; chmod +x .devbin/ptb-lm; }
t0=$(date +%s)
b() { local t=$1 c=$2 p=$3; shift 3; timeout 60 .devbin/ptb-lm bench --config $c --precision $p --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_${c}_${p}$t.json "$@" 2>&1 | grep -v '^{' | tail -n 1 | sed "s/^/$c $p $*: /"; }
for c in large medium small; do for p in bf16 f16 tf32 fp32; do b "" $c $p; done; done
b _eager large bf16 --no-cuda-graph
timeout 200 python3 scripts/torch_reference.py --ptb large --data data/ptb --json $OUT/torch_ptb_large.json > $OUT/torch.log 2>&1; echo "torch rc=$?"; grep "^| large" $OUT/torch.log
b _after_torch large bf16
echo "total $(( $(date +%s)-t0 ))s"
