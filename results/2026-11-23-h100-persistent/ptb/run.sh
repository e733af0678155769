#!/usr/bin/env bash
# Persistent kernels with dropout: checks; ptb-lm graph = eager with --rnn persistent; PTB bench
# persistent vs cuDNN (bf16, f16), medium/small; PyTorch's reference in the same command.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
for f in .devbin/*.xz; do [ -f "${f%.xz}" ] || xz -dk -T8 "$f"; done
chmod +x .devbin/gpu_check .devbin/bench_grid .devbin/ptb-lm
t0=$(date +%s)
timeout 200 .devbin/gpu_check --persistent > $OUT/persistent_check.log 2>&1; echo "check rc=$? $(( $(date +%s)-t0 ))s"; grep -cE "\| ok \|$" $OUT/persistent_check.log; grep -E "FAIL|rror|p=0.5" $OUT/persistent_check.log | cut -c1-300
B=.devbin/ptb-lm
strip_wps() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
A="--config large --precision bf16 --rnn persistent --max-batches 80 --data data/ptb"
timeout 100 $B train $A --out /tmp/Pg --epochs 1 > $OUT/pers-g.log 2>&1; echo "train g rc=$?"
timeout 100 $B train $A --out /tmp/Pe --epochs 1 --no-cuda-graph > $OUT/pers-e.log 2>&1; echo "train e rc=$?"
strip_wps $OUT/pers-g.log > /tmp/g; strip_wps $OUT/pers-e.log > /tmp/e; cat /tmp/g
cmp -s /tmp/g /tmp/e && echo "persistent: graph = eager epoch lines" || { echo "persistent: graph/eager DIFFER"; cat /tmp/e; }
grep -iE "graph|capture|LSTM:" $OUT/pers-g.log | head -5
for c in large medium small; do for r in cudnn persistent; do for p in bf16 f16; do
  [ $c != large ] && [ $p = f16 ] && continue
  timeout 60 $B bench --config $c --precision $p --rnn $r --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_${c}_${p}_$r.json 2>&1 | grep -v '^{' | tail -n 2
done; done; done
timeout 150 python3 scripts/torch_reference.py --ptb large --data data/ptb --json $OUT/torch_ptb_large.json > $OUT/torch.log 2>&1; echo "torch rc=$?"; grep "^| large" $OUT/torch.log
echo "total $(( $(date +%s)-t0 ))s"
