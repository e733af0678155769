#!/usr/bin/env bash
# On the GPU machine, the wgmma forward's 16-unit blocks (recurrence_wgmma_fwd.cu's WG_UNITS 16:
# a block's 64 gate rows all in registers, twice the blocks), DIR built as scripts/devbin.sh
# builds it:
#   1. (tests) the wgmma GPU test with CANDLE_RNN_PERSISTENT_WGMMA=1 and
#      CANDLE_RNN_PERSISTENT_WGMMA_UNITS=16 (its cases at batch 32 and 64 of hidden 1024 and at
#      [*, 128, 512] on 16-unit blocks, every output and gradient against f64;
#      OUT/tests-units16.log), then compute-sanitizer memcheck, racecheck and synccheck on a
#      training call and an inference call of LSTM [1, 32, 3, 1024] and GRU [1, 128, 3, 512] so
#      (OUT/sanitize.log).
#   2. (bench) graphed training with the input's gradient and forwards, µs an example, at
#      [30 and 200, 32, 1024], [30, 64, 1024] and [30 and 200, 128, 512], LSTM and GRU, bf16: the
#      default / the wgmma forward in 32-unit blocks / in 16-unit blocks / the default; eagerly at
#      [30, 32, 1024] (OUT/bench.log); then PyTorch's fp16 module at those shapes, graphed and
#      eager (OUT/torch*.log).
#   3. (rule; a build with the rule: inference on 16-unit blocks where they fit, from batch 32 at
#      hidden 1024) the wgmma GPU test and the rules' test by default (OUT/tests-*.log), then the
#      half grid beside PyTorch's fp16 module (OUT/table.md, OUT/grid.tgz).
#   4. (gpu-check) `gpu_check --persistent` (OUT/gpu_check.log; about 400 s).
#   5. (stacks; the rule's build) inference forwards of stacks that the rule moves, µs an example,
#      graphed and eager: LSTM and GRU [30, 32, 3 x 1024] (was: the layer-by-layer kernels,
#      CANDLE_RNN_PERSISTENT_WGMMA=0) and [30, 128, 2 x 512] (was: 32-unit wgmma blocks) /
#      the default / as before (OUT/stacks.log); then PyTorch's fp16 module there
#      (OUT/torch-stacks*.log).
#   6. (batch64; the rule's build) training with the input's gradient and the forward at
#      [30, 64, 1024] and [30, 64, 3 x 1024], LSTM and GRU, graphed and eager: the default against
#      the wgmma forward asked for (CANDLE_RNN_PERSISTENT_WGMMA=1: 32-unit blocks in training),
#      each row with the kernel that served (OUT/batch64.log); then PyTorch's fp16 module there
#      (OUT/torch-batch64*.log).
#   results/2026-12-01-h200-wgmma-16-units/run.sh DIR OUT [tests|bench|rule|gpu-check|stacks|batch64]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-tests}
source scripts/on-gpu.sh
wide="CANDLE_RNN_PERSISTENT_WGMMA=1 CANDLE_RNN_PERSISTENT_WGMMA_UNITS=32"
narrow="CANDLE_RNN_PERSISTENT_WGMMA=1 CANDLE_RNN_PERSISTENT_WGMMA_UNITS=16"
shapes="1,32,30,1024 1,32,200,1024 1,64,30,1024 1,128,30,512 1,128,200,512"
for part in $parts; do
  case $part in
    tests)
      stamp "tests"
      (export $narrow
       gpu_tests_as units16 persistent_wgmma
       sanitize_bench "lstm:1,32,3,1024 gru:1,128,3,512" op-bf16-default \
         --input-grad)
      ;;
    bench)
      stamp "bench"
      line() { echo "default $(bench_with X=1) | u32 $(bench_with $wide) | u16 $(bench_with $narrow) | default $(bench_with X=1)"; }
      for graph in --graph; do
        for c in lstm gru; do
          for sh in $shapes; do echo "graphed $c $sh | $(line)"; done
        done
      done 2>&1 | tee "$OUT/bench.log"
      graph=""
      for c in lstm gru; do echo "eager $c 1,32,30,1024 | $(sh=1,32,30,1024 line)"; done 2>&1 | tee -a "$OUT/bench.log"
      torch_rows torch "$(for c in lstm gru; do for sh in $shapes; do echo $c,$sh; done; done)"
      ;;
    rule)
      stamp "rule"
      gpu_tests_as wgmma persistent_wgmma
      gpu_tests_as rules graphed_modules_replay
      stamp "half grid"
      half_grid
      ;;
    stacks)
      stamp "stacks"
      export PHASE=forward
      for graph in --graph ""; do
        for c in lstm gru; do
          sh=3,32,30,1024 before=CANDLE_RNN_PERSISTENT_WGMMA=0
          echo "${graph:-eager} $c $sh | before $(bench_with $before) | default $(bench_with X=1) | before $(bench_with $before)"
          sh=2,128,30,512 before=CANDLE_RNN_PERSISTENT_WGMMA_UNITS=32
          echo "${graph:-eager} $c $sh | before $(bench_with $before) | default $(bench_with X=1) | before $(bench_with $before)"
        done
      done 2>&1 | tee "$OUT/stacks.log"
      unset PHASE
      torch_rows torch-stacks "lstm,3,32,30,1024 gru,3,32,30,1024 lstm,2,128,30,512 gru,2,128,30,512"
      ;;
    batch64)
      stamp "batch64"
      for graph in --graph ""; do
        for c in lstm gru; do
          for sh in 1,64,30,1024 3,64,30,1024; do
            echo "${graph:-eager} $c $sh | default $(bench_rows "$graph" $c $sh op-bf16-default)" \
              "wgmma $(CANDLE_RNN_PERSISTENT_WGMMA=1 bench_rows "$graph" $c $sh op-bf16-default)"
          done
        done
      done 2>&1 | tee "$OUT/batch64.log"
      torch_rows torch-batch64 "lstm,1,64,30,1024 gru,1,64,30,1024 lstm,3,64,30,1024 gru,3,64,30,1024"
      ;;
    gpu-check)
      stamp "gpu-check"
      gpu_check_persistent
      ;;
  esac
done
stamp done
