#!/usr/bin/env bash
# On the GPU machine: TF32 training whose forward takes the scaled f16 operands too (branch
# `tf32-scaled-training`: `Plan::scaled` for training plans of f32 operands; the backward keeps
# TF32 products), against main's (the forward in TF32 products). DIR built as
# `scripts/devbin.sh DIR --old main` builds it on the branch:
#   1. (tests) the GPU tests of TF32 on the kernels and of dropout (TF32 stacks' gradients
#      against finite differences among them; OUT/tests-*.log).
#   2. (check) `gpu_check --persistent --dtype tf32`, both cells (OUT/gpu_check.log).
#   3. (bench) graphed training with the input's gradient, then the forward, µs an example,
#      op-tf32-default, main's build / the branch's / main's / the branch's, at the TF32 shapes
#      the default trains on the kernels, LSTM and GRU (OUT/bench.log).
#   4. (sanitize) compute-sanitizer memcheck, racecheck and synccheck on a training call with
#      the input's gradient, op-tf32-persistent, LSTM [3, 8, 512] and GRU [3, 16, 128]
#      (OUT/sanitize.log).
#   results/2026-12-01-h200-tf32-scaled-training/run.sh DIR OUT [tests|check|bench|sanitize]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-tests}
source scripts/on-gpu.sh
old="$bin/old-bench_grid"
shapes="1,32,30,128 1,32,30,512 1,32,30,1024 1,128,30,512 3,128,30,512 2,20,35,650"
for part in $parts; do
  case $part in
    tests)
      stamp "tests"
      gpu_tests_as tf32 persistent_tf32
      gpu_tests_as dropout dropout
      ;;
    check)
      stamp "check"
      gpu_check_persistent --dtype tf32
      ;;
    bench)
      stamp "bench"
      graph=--graph v=op-tf32-default
      for sh in $shapes; do
        for c in lstm gru; do
          echo "$c $sh | old $(BENCH_GRID=$old bench_with X=1) | new $(bench_with X=1)" \
            "| old $(BENCH_GRID=$old bench_with X=1) | new $(bench_with X=1)"
        done
      done | tee "$OUT/bench.log"
      ;;
    sanitize)
      stamp "sanitize"
      SAN_TIMEOUT=120 sanitize_bench "lstm:1,8,3,512 gru:1,16,3,128" op-tf32-persistent --input-grad
      ;;
  esac
done
