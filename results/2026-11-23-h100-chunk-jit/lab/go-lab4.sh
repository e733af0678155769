#!/usr/bin/env bash
# Cluster sums pushed into the owner's shared memory (PUSH) against pulled; the forward split
# over K in clusters of 2 and 4 with other warp layouts (MG).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-lab
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'rm -f $OUT/*.out; tar czf $FINAL/lab.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
run() { echo -n "$1.$2: "; timeout 30 $D/lab-$1 30 $OUT/$1.out $OUT/$3.out 2>&1 | grep -vE "config|output mean" | sed 's/compare with [^:]*: //' | tr '\n' ' '; echo; }
for r in 1 2; do
  for v in fwd fwd6 fwd2-pull fwd2 fwd2-mg2 fwd2-mg1 fwd4 fwd4-mg2 fwd4-mg1; do run $v $r fwd; done
  for v in bwd2-pull bwd2 bwd4-pull bwd4; do run $v $r bwd2-pull; done
done
for v in bwd4-ph fwd4-mg1-ph fwd2-mg2-ph; do echo "== $v"; timeout 30 $D/lab-$v 10 2>&1 | grep -v "output mean"; done
