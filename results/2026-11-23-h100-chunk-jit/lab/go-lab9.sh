#!/usr/bin/env bash
# The barrier halves as helpers (grid_arrive / grid_wait) against HEAD's inline code: outputs
# bit for bit, and times.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-lab
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'rm -f $OUT/*.out; tar czf $FINAL/lab.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
run() { echo -n "$1: "; timeout 30 $D/lab-$1 20 $OUT/$1.out $OUT/$2.out 2>&1 | grep -vE "config|output mean" | sed 's/compare with [^:]*: //' | tr '\n' ' '; echo; }
for v in fwd fwd2 bwd bwd1; do run head-$v head-$v; run $v head-$v; done
