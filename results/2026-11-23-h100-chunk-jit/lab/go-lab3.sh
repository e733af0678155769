#!/usr/bin/env bash
# Forward: PARTS 6 (the new default) / 12, 16 warps, LATE (outputs stored after the barrier's
# arrival), SLICES (one counter per slice of h); backward LATE; phases.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-lab
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'rm -f $OUT/*.out; tar czf $FINAL/lab.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for r in 1 2; do
  for v in fwd p6 p12 w16 late slices late-slices w16-ls fwd-cl2 fwd-cl2-late; do echo -n "$v.$r: "; timeout 30 $D/lab-$v 30 $OUT/$v.out $OUT/fwd.out 2>&1 | tail -n +2 | grep -E "us per|compare|rror" | sed 's/compare with [^:]*: //' | tr '\n' ' '; echo; done
  for v in bwd bwd-late; do echo -n "$v.$r: "; timeout 30 $D/lab-$v 30 $OUT/$v.out $OUT/bwd.out 2>&1 | tail -n +2 | grep -E "us per|compare|rror" | sed 's/compare with [^:]*: //' | tr '\n' ' '; echo; done
done
for v in p6-ph ls-ph bwd-ph bwd-late-ph; do echo "== $v"; timeout 30 $D/lab-$v 10 2>&1 | tail -n +2 | grep -v "output mean"; done
