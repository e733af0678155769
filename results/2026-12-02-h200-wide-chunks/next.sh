#!/usr/bin/env bash
# Not run yet (written for the next session; this one's device time was spent): main at e3e42be
# or later (the 3-buffer rule) on the GPU, from the repository root, with D (its
# scripts/devbin.sh binaries) and OUT set, one command a part (each near the device's 600 s):
# - `suite K`: part K of 2 of the op's GPU tests (OUT/tests-K.log);
# - `grid`: the half grid through the sink and through `loss.backward()` (OUT/grid-*/);
# - `tf32`: the TF32 grid through the sink, against PyTorch's TF32 module (OUT/grid-tf32/; last
#   run 2026-12-01, before the wide backward, which takes half precision only);
# - `check`: gpu_check --persistent in f16 and bf16 (OUT/gpu_check-*.log).
#   D=... OUT=... results/2026-12-02-h200-wide-chunks/next.sh suite 1
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
case $1 in
  suite) stamp "suite $2"; gpu_tests_part "$2" 2 ;;
  grid) half_grid_apis ;;
  tf32)
    stamp tf32
    OUT=$OUT/grid-tf32 && mkdir -p "$OUT"
    compare_grid torch-tf32 op-tf32-default 450
    ;;
  check) stamp check; gpu_check_half ;;
esac
