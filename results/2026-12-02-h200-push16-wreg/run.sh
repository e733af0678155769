#!/usr/bin/env bash
# On the GPU, from the repository root, with D=.devbin-b (scripts/devbin.sh of this change) and
# .devbin-old/bench_grid.xz (main at 3efa039's, the library before it): the GPU tests of the
# paths it changes, then graphed (and for two shapes eager) training and forwards of the f16
# default, before / after / before, with the backward through L2 at hidden 512 beside, and
# PyTorch's fp16 module at four of the shapes.
#   D=.devbin-b OUT=... results/2026-12-02-h200-push16-wreg/run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
[ -x .devbin-old/bench_grid ] || xz -dkf .devbin-old/bench_grid.xz
old=$PWD/.devbin-old/bench_grid
stamp tests
TESTS_TIMEOUT=240 gpu_tests_as c16 --nocapture persistent_clusters_of_16
TESTS_TIMEOUT=240 gpu_tests_as rg --nocapture persistent_register_gates
stamp bench
v=op-f16-default
row() {  # graph SPEC [L2]: "before | after | after, backward through L2 | before"
  split_spec "$v:$2"
  graph=$1
  echo "${graph:-eager} $c $sh | $(BENCH_GRID=$old bench_with X=1)| $(bench_with X=1)|" \
    "${3:+$(bench_with CANDLE_RNN_PERSISTENT_PUSH=1,0)|} $(BENCH_GRID=$old bench_with X=1)"
}
{
  for spec in lstm:1,32,30,512 gru:1,32,30,512 lstm:1,32,200,512 gru:1,32,200,512; do row --graph $spec L2; done
  for spec in lstm:1,32,30,384 gru:1,32,30,384 lstm:1,8,30,256 gru:1,8,30,256 lstm:1,32,30,128 gru:1,32,30,128 \
    lstm:1,128,30,128 gru:1,128,30,128 lstm:1,16,30,64; do row --graph $spec; done
  for spec in lstm:1,32,30,512 gru:1,32,30,512; do row "" $spec L2; done
} 2>&1 | tee "$OUT/bench.txt"
stamp torch
torch_rows torch "lstm,1,32,30,512 gru,1,32,30,512 lstm,1,32,30,128 lstm,1,128,30,128" 150 | tee "$OUT/torch.txt"
stamp done
