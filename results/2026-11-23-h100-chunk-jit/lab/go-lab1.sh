#!/usr/bin/env bash
# Persistent kernels in the standalone harness (scripts/persistent-lab): PTB large's shape,
# timings of the library's kernels and of parameter variants, and per-phase clocks.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-lab
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
for r in 1 2; do
  for v in fwd fwd-w16 fwd-cl2; do echo "== $v.$r"; timeout 30 $D/lab-$v 30 $OUT/$v.out $OUT/fwd.out 2>&1 | tail -n +2; done
  for v in bwd bwd-ch32 bwd-cl1 bwd-w16; do echo "== $v.$r"; timeout 30 $D/lab-$v 30 $OUT/$v.out $OUT/bwd.out 2>&1 | tail -n +2; done
done
for v in fwd-ph fwd-w16-ph fwd-cl2-ph bwd-ph bwd-cl1-ph bwd-w16-ph; do echo "== $v"; timeout 30 $D/lab-$v 10 2>&1; done
