#!/usr/bin/env bash
# Main after bidirectional layers went onto the crate's kernels (7938f6c), on the GPU: what the
# last run left out (../2026-12-02-h200-bidir-units/, "What did not run"). From the repository
# root, with D (scripts/devbin.sh binaries) and OUT set; one command a part:
# - `suite`: the op's whole GPU suite in two halves side by side (tests-1.log, tests-2.log;
#   pad.cu's row kernels gained a width and a flip, which every padded call uses) beside
#   `gpu_check --persistent` in f16 and bf16 (its bidirectional rows among them);
# - `grids`: the half grid with every layer bidirectional, the default (the new rule) against
#   PyTorch's fp16 module through the sink and through `loss.backward()` (OUT/grid-direct/,
#   OUT/grid-plain/), packed into OUT/grids.tgz with their tables beside it.
#   D=... OUT=... results/2026-12-02-h200-bidir-check/run.sh suite
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
case $1 in
  suite)
    stamp suite
    (gpu_tests_part 1 2) &
    (gpu_tests_part 2 2) &
    (gpu_check_half) &
    wait
    stamp done
    ;;
  grids)
    export COMPARE_ARGS=--bidirectional
    GRID_TIMEOUT=250 half_grid_apis
    for api in direct plain; do cp "$OUT/grid-$api/table.md" "$OUT/table-$api.md"; done
    (cd "$OUT" && tar czf grids.tgz grid-direct grid-plain && rm -rf grid-direct grid-plain)
    ;;
esac
