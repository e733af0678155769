#!/usr/bin/env bash
# Exchange buffers replicated REPL times (each block reads one replica: the hot lines spread
# over more L2 slices).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-lab
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'rm -f $OUT/*.out; tar czf $FINAL/lab.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
run() { echo -n "$1.$2: "; timeout 30 $D/lab-$1 30 $OUT/$1.out $OUT/$3.out 2>&1 | grep -vE "config|output mean" | sed 's/compare with [^:]*: //' | tr '\n' ' '; echo; }
for r in 1 2; do
  for v in fwd fwd-r2 fwd-r4 fwd-r8 fwd2-mg2 fwd2-mg2-r4; do run $v $r fwd; done
  for v in bwd bwd-r2 bwd-r4; do run $v $r bwd; done
done
for v in fwd-r4-ph bwd-r4-ph; do echo "== $v"; timeout 30 $D/lab-$v 10 2>&1 | grep -v "output mean"; done
