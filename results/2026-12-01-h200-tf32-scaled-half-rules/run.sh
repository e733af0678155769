#!/usr/bin/env bash
# On the GPU machine: TF32 inference plans (scaled f16 operands, `Plan::scaled`) on half
# precision's rules for their batch groups and one-cluster sizes (branch
# `tf32-scaled-half-rules`), against main's (the TF32 rules). DIR built as
# `scripts/devbin.sh DIR --old main` builds it on the branch:
#   1. (tests) the GPU tests of TF32 on the kernels (OUT/tests-tf32.log).
#   2. (bench) graphed inference forwards, µs an example, op-tf32-default and op-tf32-persistent,
#      main's build / the branch's / main's / the branch's, at the TF32 shapes up to hidden 512
#      that the rules may plan otherwise, LSTM and GRU (OUT/bench.log); then the branch's at
#      [30, 128, 128] beside cuDNN's `PersistStaticSmallH` (GRU: the default there).
#   results/2026-12-01-h200-tf32-scaled-half-rules/run.sh DIR OUT [tests|bench]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-tests}
source scripts/on-gpu.sh
variants=op-tf32-default,op-tf32-persistent
shapes="1,128,30,128 1,32,30,128 1,16,30,128 1,64,30,128 1,128,30,256 1,32,30,256 1,32,30,512 2,20,35,650"
# One line: the label $1, then forward_rows of main's build / the branch's, twice, at `c`, `sh`.
old_new() {
  local old="$bin/old-bench_grid"
  echo "$1 | old $(BENCH_GRID=$old forward_rows --graph $c $sh "$variants")" \
    "| new $(forward_rows --graph $c $sh "$variants")" \
    "| old $(BENCH_GRID=$old forward_rows --graph $c $sh "$variants")" \
    "| new $(forward_rows --graph $c $sh "$variants")"
}
for part in $parts; do
  case $part in
    tests)
      stamp "tests"
      gpu_tests_as tf32 persistent_tf32
      ;;
    bench)
      stamp "bench"
      for sh in $shapes; do for c in lstm gru; do old_new "$c $sh"; done; done | tee "$OUT/bench.log"
      for c in lstm gru; do
        echo "$c 1,128,30,128 | $(forward_rows --graph $c 1,128,30,128 op-tf32-static-small-h,op-tf32-persistent)"
      done | tee -a "$OUT/bench.log"
      ;;
  esac
done
