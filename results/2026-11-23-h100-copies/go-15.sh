#!/usr/bin/env bash
# main ee89568 + precompile (candle's modules compiled on threads of their own at start) against
# ee89568, each on an empty driver compile cache (CUDA_CACHE_PATH of its own), as on a fresh
# machine: PTB large bf16, one epoch of 30 batches; then the new binary again on its now warm cache.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-s16
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm base-ptb-lm; do [ -x $D/$f ] || { xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; }; done
nproc
run() {  # binary cache label
  local t0=$(date +%s.%N)
  CUDA_CACHE_PATH=$2 timeout 120 $D/$1 train --config large --precision bf16 --seed 4 --max-max-epoch 1 --max-batches 30 --data data/ptb --out /tmp/o-$3 > $OUT/$3.log 2>&1
  echo "$3: rc=$? $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s; $(grep -h '^Epoch' $OUT/$3.log | cut -c1-90)"
}
run ptb-lm /tmp/cache-new1 new-fresh
run base-ptb-lm /tmp/cache-base base-fresh
run ptb-lm /tmp/cache-new2 new-fresh-again
run ptb-lm /tmp/cache-new2 new-warm
run base-ptb-lm /tmp/cache-base base-warm
du -sh /tmp/cache-new1 /tmp/cache-base
