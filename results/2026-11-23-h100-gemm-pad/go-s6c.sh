#!/usr/bin/env bash
# Kernel device times of PTB large's bf16 step on the persistent kernels (ncu, one metric).
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
[ -x .devbin/ptb-lm ] || { xz -dkf -T8 .devbin/ptb-lm.xz; chmod +x .devbin/ptb-lm; }
date +%T
timeout 300 bash scripts/profile-ptb-step.sh .devbin/ptb-lm $OUT large bf16 | head -30
date +%T
