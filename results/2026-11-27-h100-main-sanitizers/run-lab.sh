#!/usr/bin/env bash
# On the GPU machine: the forward's multicast in the harness (scripts/persistent-lab/lab.cu,
# built by build.sh into LABDIR) under compute-sanitizer's memcheck, racecheck and synccheck:
# lab-mc40 is hidden 512, batch 40 (two chunks), clusters of 8; lab-mc64 hidden 1024, batch 64,
# clusters of 2. Then the op's GPU tests (binaries of scripts/devbin.sh in DIR).
#   results/2026-11-27-h100-main-sanitizers/run-lab.sh DIR LABDIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 LAB=$2 OUT=$3
source scripts/on-gpu.sh
for lab in mc40 mc64; do
  for tool in memcheck racecheck synccheck; do
    stamp "$lab $tool"
    timeout 120 "$CS" --tool $tool "$LAB/lab-$lab" 1 > "$OUT/lab-$lab-$tool.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Warning" "$OUT/lab-$lab-$tool.log" | sort | uniq -c | head -5
  done
done
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 330 "$D/op-gpu-tests" --test-threads=1 > "$OUT/tests.log" 2>&1
echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests.log" | head
stamp done
