#!/usr/bin/env bash
# The forward with its weight tiles in registers (WREG) instead of read from shared memory at
# every step.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-lab
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'rm -f $OUT/*.out; tar czf $FINAL/lab.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
run() { echo -n "$1.$2: "; timeout 30 $D/lab-$1 30 $OUT/$1.out $OUT/$3.out 2>&1 | grep -vE "config|output mean" | sed 's/compare with [^:]*: //' | tr '\n' ' '; echo; }
for r in 1 2; do
  for v in fwd wreg wreg-p3 wreg-p12; do run $v $r fwd; done
  run bwd $r bwd
done
for v in wreg-ph; do echo "== $v"; timeout 30 $D/lab-$v 10 2>&1 | grep -v "output mean"; done
