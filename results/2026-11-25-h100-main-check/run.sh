#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old e96f685` at main after the
# inference batches in chunks (4ed09e6): the GPU tests and PTB large and medium bf16 first
# epochs beside e96f685's (`persistent-gpu.sh same`), then gpu_check --persistent.
#   results/2026-11-25-h100-main-check/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
scripts/persistent-gpu.sh same "$D" "$OUT/same"
source scripts/on-gpu.sh
stamp "gpu_check --persistent"
L=$OUT/persistent.log
timeout 220 "$D/gpu_check" --persistent --json "$OUT/persistent.json" > "$L" 2>&1
echo "gpu_check rc=$? ok $(grep -c '| ok |' "$L") failed $(grep -c '| FAIL' "$L")"
grep -E "\| FAIL|panick|^Error" "$L" | head -5 | cut -c1-300
grep -E "B128|B256|B77" "$L" | head -12 | cut -c1-200
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
