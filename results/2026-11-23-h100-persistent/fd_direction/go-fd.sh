#!/usr/bin/env bash
# gpu_check --persistent three times: the finite-difference row through dropout with its new direction
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
xz -dkf -T8 .devbin/gpu_check.xz; chmod +x .devbin/gpu_check
for i in 1 2 3; do
  timeout 150 .devbin/gpu_check --persistent > $OUT/persistent_$i.log 2>&1; echo "run $i rc=$?"
  grep -cE "\| ok \|$" $OUT/persistent_$i.log; grep -E "finite differences|FAIL" $OUT/persistent_$i.log | cut -c1-250
done
