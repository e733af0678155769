#!/usr/bin/env bash
# The forward with tiles in registers: 12 or 16 warps, 2 or 4 parts.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-lab
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'rm -f $OUT/*.out; tar czf $FINAL/lab.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
run() { echo -n "$1.$2: "; timeout 30 $D/lab-$1 30 $OUT/$1.out $OUT/$3.out 2>&1 | grep -vE "config|output mean" | sed 's/compare with [^:]*: //' | tr '\n' ' '; echo; }
for r in 1 2; do for v in fwd w12 w12-nr w16 p4 p2; do run $v $r fwd; done; done
for v in w12-ph; do echo "== $v"; timeout 30 $D/lab-$v 10 2>&1 | grep -v "output mean"; done
