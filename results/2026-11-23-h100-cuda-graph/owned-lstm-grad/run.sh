#!/usr/bin/env bash
# Run Q: as P (gpu_check passed there), with the half-precision norm of our own:
# and resume with the owned LSTM gradient, then bench (graphed and eager) beside PyTorch.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > /dev/null 2>&1
for f in .devbin/*.xz; do xz -dkf -T8 "$f"; done
chmod +x .devbin/ptb-lm .devbin/ptb-lm-unit
t0=$(date +%s)
.devbin/gpu_check --json $OUT/gpu_check.json > $OUT/gpu_check.log 2>&1; echo "gpu_check rc=$?"  # run in the command before this one
.devbin/ptb-lm-unit > $OUT/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|FAILED|panicked" $OUT/unit.log | head
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
  $B train $A --out /tmp/P$p-g --epochs 2 > $OUT/$p-g.log 2>&1
  $B train $A --out /tmp/P$p-e --epochs 2 --no-cuda-graph > $OUT/$p-e.log 2>&1
  $B train $A --out /tmp/P$p-r --epochs 1 > $OUT/$p-r1.log 2>&1
  $B train $A --out /tmp/P$p-r --epochs 2 --resume > $OUT/$p-r2.log 2>&1
  strip_wps $OUT/$p-g.log > /tmp/g; strip_wps $OUT/$p-e.log > /tmp/e; strip_wps $OUT/$p-r1.log $OUT/$p-r2.log > /tmp/r
  tail -n 1 /tmp/g
  cmp -s /tmp/g /tmp/e && echo "$p: graph = eager epoch lines; $(same_weights /tmp/P$p-g /tmp/P$p-e)" || { echo "$p: graph/eager DIFFER"; cat /tmp/e; }
  cmp -s /tmp/g /tmp/r && echo "$p: resumed = straight; $(same_weights /tmp/P$p-g /tmp/P$p-r)" || { echo "$p: resume DIFFER"; cat /tmp/r; }
done
echo "== bench $(( $(date +%s)-t0 ))s"
for c in large medium small; do for p in tf32 bf16 f16 fp32; do
  [ $c != large ] && [ $p = fp32 ] && continue
  $B bench --config $c --precision $p --batches 100 --warmup 20 --data data/ptb --json $OUT/bench_${c}_$p.json 2>&1 | grep -v '^{'
done; done
for c in large medium small; do for p in tf32 bf16; do $B bench --config $c --precision $p --batches 100 --warmup 20 --data data/ptb --no-cuda-graph --json $OUT/bench_${c}_${p}_eager.json 2>&1 | grep -v '^{'; done; done
echo "== torch $(( $(date +%s)-t0 ))s"
python3 scripts/torch_reference.py --ptb large --data data/ptb --json $OUT/torch_ptb_large.json > $OUT/torch.log 2>&1; echo "torch rc=$?"; grep "^| large" $OUT/torch.log
echo "total $(( $(date +%s)-t0 ))s"
