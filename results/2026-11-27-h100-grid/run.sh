#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR (TF32 training on the crate's kernels;
# the forward multicast's mbarriers initialised by one thread): what did not run on a GPU yet,
# then the grid in TF32 and half precision with the new defaults.
#   checks: the op's GPU tests (the multicast GPU test among them);
#   gpu_check: gpu_check --persistent (TF32 rows at several chunks now up to hidden 512);
#   grid1, grid2, grid3: scripts/compare-grid.sh over TF32 and half (the op's default in tf32,
#          bf16 and f16, cuDNN's standard in bf16; PyTorch's TF32 and fp16 modules), two passes
#          each, into OUT/grid; the table follows the third.
#   results/2026-11-27-h100-grid/run.sh DIR OUT checks|gpu_check|grid1|grid2|grid3
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
grid() {
  COMPARE_IMPLS=torch-tf32,torch-fp16 COMPARE_PASSES="$1" timeout 570 scripts/compare-grid.sh \
    "$D/bench_grid" "$OUT/grid" 10 3 --variants op-tf32-default,op-bf16-default,op-f16-default,op-bf16-standard \
    >> "$OUT/grid.log" 2>&1
  echo "compare-grid $1 rc=$?"
}
case $PART in
checks)
  stamp "GPU tests"
  # A fresh machine's first NVRTC builds take most of this (about 170 s in all).
  RNN_TEST_REQUIRE_GPU=1 timeout 330 "$D/op-gpu-tests" --test-threads=1 > "$OUT/tests.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests.log" | head
  ;;
gpu_check)
  stamp "gpu_check --persistent"
  timeout 560 "$D/gpu_check" --persistent --seed 2711 > "$OUT/gpu_check.log" 2>&1
  echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"
  grep -E '\| FAIL \|' "$OUT/gpu_check.log" | head
  ;;
grid1) stamp "grid: ours, PyTorch (graphed)"; grid "op_a torch_a" ;;
grid2) stamp "grid: PyTorch, ours (graphed)"; grid "torch_b op_b" ;;
grid3)
  stamp "grid: eager"; grid "op_eager torch_eager"
  grep -E "^\| (tf32|half) " "$OUT/grid/table.md"
  ;;
esac
stamp done
