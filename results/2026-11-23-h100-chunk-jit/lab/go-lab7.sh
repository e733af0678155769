#!/usr/bin/env bash
# The backward (clusters of 4, 13 units) with other chunk widths and deeper pipelines.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-lab
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'rm -f $OUT/*.out; tar czf $FINAL/lab.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
run() { echo -n "$1.$2: "; timeout 30 $D/lab-$1 30 $OUT/$1.out $OUT/$3.out 2>&1 | grep -vE "config|output mean" | sed 's/compare with [^:]*: //' | tr '\n' ' '; echo; }
for r in 1 2; do for v in bwd c48n3 c48n2 c16n8 c32n5; do run $v $r bwd; done; done
for v in c48n3-ph; do echo "== $v"; timeout 30 $D/lab-$v 10 2>&1 | grep -v "output mean"; done
