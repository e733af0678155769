#!/usr/bin/env bash
# Branch jit-probe: how long the driver takes to compile candle's PTX modules on an empty cache,
# loaded one after another, on 8 threads of one process, or in 8 processes (each with an empty
# CUDA_CACHE_PATH of its own; then once more, warm). Decides whether a cold machine's ~20 s
# first step can be shortened from inside ptb-lm.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-next4
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
[ -x $D/jitprobe-ptb-lm ] || { xz -dkf -T8 $D/jitprobe-ptb-lm.xz; chmod +x $D/jitprobe-ptb-lm; }
for m in sequential threads processes; do
  echo "== $m (empty cache)"; CUDA_CACHE_PATH=/tmp/jit-$m timeout 120 $D/jitprobe-ptb-lm jit-probe $m 2>&1 | tee $OUT/$m.log | tail -n 9
done
echo "== sequential (warm cache)"; CUDA_CACHE_PATH=/tmp/jit-sequential timeout 60 $D/jitprobe-ptb-lm jit-probe sequential 2>&1 | tail -n 1
