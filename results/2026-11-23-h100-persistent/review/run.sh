#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
xz -dkf -T8 .devbin/gpu_check.xz; chmod +x .devbin/gpu_check
timeout 500 .devbin/gpu_check --json $OUT/gpu_check.json > $OUT/gpu_check.log 2>&1; echo "gpu_check rc=$?"
grep -cE "\| ok \|$" $OUT/gpu_check.log; grep -E "FAIL|rror" $OUT/gpu_check.log | head; tail -n 4 $OUT/gpu_check.log
