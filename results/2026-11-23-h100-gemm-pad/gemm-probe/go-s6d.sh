#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
timeout 120 python3 .devbin/exp/gemm_align2.py $OUT/gemm_align2.json 2>&1 | tee $OUT/gemm_align2.log | grep -v Warning
