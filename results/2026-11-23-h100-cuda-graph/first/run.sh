#!/usr/bin/env bash
# Run H (issue 15, graphed step): ptb-lm unit tests on the GPU (graphed == eager, dropout kernel
# == CPU), graph vs eager training runs and resume on the GPU, bench with and without the graph,
# and PyTorch's PTB large reference in the same command.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > /dev/null 2>&1
for f in .devbin/*.xz; do xz -dkf -T8 "$f"; done
chmod +x .devbin/ptb-lm .devbin/ptb-lm-unit
t0=$(date +%s)
.devbin/ptb-lm-unit > $OUT/unit.log 2>&1; echo "unit rc=$? $(( $(date +%s)-t0 ))s"; grep -E "test result|FAILED|panicked" $OUT/unit.log | head
B=.devbin/ptb-lm
strip_wps() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
same_weights() { python3 - "$1" "$2" <<'PY'
import struct,json,sys
def load(p):
    b=open(p,'rb').read(); n=struct.unpack('<Q',b[:8])[0]; return b[8+n:]
print('weights identical' if load(sys.argv[1]+'/model.safetensors')==load(sys.argv[2]+'/model.safetensors') else 'WEIGHTS DIFFER')
PY
}
for p in tf32 bf16; do
  A="--config medium --precision $p --max-batches 120 --max-epoch 1"
  $B train $A --out /tmp/$p-g --epochs 2 > $OUT/$p-g.log 2>&1; echo "$p graph rc=$?"
  $B train $A --out /tmp/$p-e --epochs 2 --no-cuda-graph > $OUT/$p-e.log 2>&1; echo "$p eager rc=$?"
  $B train $A --out /tmp/$p-r --epochs 1 > $OUT/$p-r1.log 2>&1
  $B train $A --out /tmp/$p-r --epochs 2 --resume > $OUT/$p-r2.log 2>&1; echo "$p resume rc=$?"
  strip_wps $OUT/$p-g.log > /tmp/g; strip_wps $OUT/$p-e.log > /tmp/e; strip_wps $OUT/$p-r1.log $OUT/$p-r2.log > /tmp/r
  cat /tmp/g; grep -h "capturing\|wps" $OUT/$p-g.log | head -3
  cmp -s /tmp/g /tmp/e && echo "$p: graph = eager epoch lines" || { echo "$p: graph/eager DIFFER"; cat /tmp/e; }
  echo "$p graph vs eager: $(same_weights /tmp/$p-g /tmp/$p-e)"
  cmp -s /tmp/g /tmp/r && echo "$p: resumed = straight epoch lines" || { echo "$p: resume DIFFER"; cat /tmp/r; }
  echo "$p resumed vs straight: $(same_weights /tmp/$p-g /tmp/$p-r)"
done
echo "== eval graph vs eager"
$B eval --checkpoint /tmp/tf32-g --max-batches 3000 2>&1 | tail -n 1
$B eval --checkpoint /tmp/tf32-g --max-batches 3000 --no-cuda-graph 2>&1 | tail -n 1
echo "== bench $(( $(date +%s)-t0 ))s"
for c in large medium small; do for p in tf32 bf16 f16 fp32; do
  [ $c != large ] && [ $p = fp32 ] && continue
  $B bench --config $c --precision $p --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_${c}_$p.json 2>&1 | grep -v '^{'
done; done
for p in tf32 bf16; do $B bench --config large --precision $p --batches 100 --warmup 20 --data data/ptb --no-cuda-graph --json $OUT/bench_large_${p}_eager.json 2>&1 | grep -v '^{'; done
echo "== torch $(( $(date +%s)-t0 ))s"
python3 scripts/torch_reference.py --ptb large --data data/ptb --json $OUT/torch_ptb_large.json > $OUT/torch.log 2>&1; echo "torch rc=$?"; tail -n 12 $OUT/torch.log
echo "total $(( $(date +%s)-t0 ))s"
