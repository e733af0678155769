#!/usr/bin/env bash
# Forward variants in the harness: PARTS (copy and multiply h in parts), MC (clusters sharing
# the copies of h through multicast bulk copies); per-phase clocks; the backward's phases.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-lab
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'rm -f $OUT/*.out; tar czf $FINAL/lab.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for r in 1 2; do
  for v in fwd p2 p3 p4 p6 mc2 mc2-p3 mc2-p6 mc3 mc3-p3; do echo -n "$v.$r: "; timeout 30 $D/lab-$v 30 $OUT/$v.out $OUT/fwd.out 2>&1 | tail -n +2 | grep -E "us per|compare|rror" | sed 's/compare with [^:]*: //' | tr '\n' ' '; echo; done
done
for v in fwd-ph p3-ph mc2-p3-ph mc3-p3-ph bwd-ph; do echo "== $v"; timeout 30 $D/lab-$v 10 2>&1 | tail -n +2 | grep -v "output mean"; done
