#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old 46d58bf` at this session's last
# kernel-side change (b632e49; later commits touch comments and docs only): the op's GPU tests
# and PTB large and medium bf16 first epochs from the new and the old ptb-lm
# (`persistent-gpu.sh same`), which must print the same lines.
#   results/2026-11-26-h200-final-check/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
scripts/persistent-gpu.sh same "$D" "$OUT/same"
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
