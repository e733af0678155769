#!/usr/bin/env bash
# On the GPU machine, DIR/op-gpu-tests (the op's GPU tests built at the rule's commit): the two
# tests of the default's kernels, among them LSTM [3, 64, 2 x 650] bf16 (the rule's new case).
#   results/2026-11-26-h100-backward-wave-rule/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
RNN_TEST_REQUIRE_GPU=1 timeout 150 "$D/op-gpu-tests" --test-threads=1 the_default 2>&1 | tail -25
