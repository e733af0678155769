#!/usr/bin/env bash
# On the GPU machine, the training rule at batch 64 of hidden 1024 (kernel.rs's
# shape_wgmma_training: the wgmma forward, 32-unit blocks; the layer-by-layer backward) and the
# wgmma forward at hidden 512 below batch 128, DIR built as scripts/devbin.sh builds it:
#   1. (suite) the op's whole GPU suite by default (OUT/tests.log): among them the wgmma test,
#      whose [*, 64, 1024] case now trains on the wgmma forward, and the rules' test.
#   2. (narrow512) graphed training with the input's gradient and forwards, µs an example, bf16,
#      at [30 and 200, 32, 512] and [30, 64, 512], LSTM and GRU: the default / the wgmma forward
#      in 16-unit blocks / in 32-unit blocks / the default (OUT/narrow512.log), with the plans
#      each setting makes at [30, 32, 512] (OUT/plans-*.log); then PyTorch's fp16 module there
#      (OUT/torch-narrow512*.log).
#   3. (gpu-check) `gpu_check --persistent --mode lstm` (OUT/gpu_check.log): its [10, 64, 1024]
#      row now trains on the wgmma forward; its [6, 96, 512] row infers on 16-unit blocks.
#   4. (rules) the default's rules test (`the_default_serves_its_rules_kernels...`) alone, after
#      its stack of 3 x 1024 at batch 32 was told to infer on ours (OUT/tests-rules.log).
#   5. (alloc-probe) what a captured graph's allocation and free nodes cost on the device
#      (graph_alloc_probe.py, PyTorch's kernels with cuMemAllocAsync nodes; OUT/alloc-probe.log).
#   6. (infer512) inference forwards, µs an example, bf16, graphed and eager, at [30 and 200, 64,
#      512], [30, 96, 512] and [30, 64, 2 and 3 x 512], LSTM and GRU: the default / the wgmma
#      forward in 16-unit blocks / the default (OUT/infer512.log).
#   7. (rule512; the build with inference at hidden 512 from batch 64 on 16-unit blocks) the
#      wgmma GPU test (a new case at [*, 64, 512]) and both rules' tests (OUT/tests-*.log); the
#      default's graphed and eager forwards at [30 and 200, 64, 512] and [30, 96, 512], LSTM and
#      GRU (OUT/rule512.log), and PyTorch's fp16 module there (OUT/torch-rule512*.log).
#   gpu-check takes the cell from GPU_CHECK_MODE (lstm unless set).
#   results/2026-12-01-h200-wgmma-train64/run.sh DIR OUT [suite|narrow512|gpu-check|rules|alloc-probe|infer512|rule512]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-suite}
source scripts/on-gpu.sh
narrow="CANDLE_RNN_PERSISTENT_WGMMA=1 CANDLE_RNN_PERSISTENT_WGMMA_UNITS=16"
wide="CANDLE_RNN_PERSISTENT_WGMMA=1 CANDLE_RNN_PERSISTENT_WGMMA_UNITS=32"
for part in $parts; do
  case $part in
    suite)
      stamp "suite"
      gpu_tests
      ;;
    narrow512)
      stamp "narrow512"
      graph=--graph
      for setting in X=1 "$narrow" "$wide"; do
        env CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 $setting timeout 60 "$D/bench_grid" --no-loop --graph \
          --loss sum --input-grad --reps 1 --warmup 0 --api direct --mode lstm --shape 1,32,30,512 \
          --variants op-bf16-default > "$OUT/plans-${setting##*=}.log" 2>&1
      done
      line() { echo "default $(bench_with X=1) | u16 $(bench_with $narrow) | u32 $(bench_with $wide) | default $(bench_with X=1)"; }
      for c in lstm gru; do
        for sh in 1,32,30,512 1,32,200,512 1,64,30,512; do echo "graphed $c $sh | $(line)"; done
      done 2>&1 | tee "$OUT/narrow512.log"
      torch_rows torch-narrow512 "$(for c in lstm gru; do for sh in 1,32,30,512 1,32,200,512 1,64,30,512; do echo $c,$sh; done; done)"
      ;;
    infer512)
      stamp "infer512"
      export PHASE=forward
      for graph in --graph ""; do
        for c in lstm gru; do
          for sh in 1,64,30,512 1,64,200,512 1,96,30,512 2,64,30,512 3,64,30,512; do
            echo "${graph:-eager} $c $sh | default $(bench_with X=1) | u16 $(bench_with $narrow) | default $(bench_with X=1)"
          done
        done
      done 2>&1 | tee "$OUT/infer512.log"
      unset PHASE
      ;;
    rule512)
      stamp "rule512"
      gpu_tests_as wgmma persistent_wgmma
      gpu_tests_as rules the_default_serves_its_rules_kernels
      gpu_tests_as graphed-rules graphed_modules_replay
      export PHASE=forward
      for graph in --graph ""; do
        for c in lstm gru; do
          for sh in 1,64,30,512 1,64,200,512 1,96,30,512; do
            echo "${graph:-eager} $c $sh | default $(bench_with X=1)"
          done
        done
      done 2>&1 | tee "$OUT/rule512.log"
      unset PHASE
      torch_rows torch-rule512 "$(for c in lstm gru; do for sh in 1,64,30,512 1,64,200,512 1,96,30,512; do echo $c,$sh; done; done)"
      ;;
    rules)
      stamp "rules"
      gpu_tests_as rules the_default_serves_its_rules_kernels
      ;;
    alloc-probe)
      stamp "alloc-probe"
      for k in "--kernels 30 --allocs 16" "--kernels 7 --allocs 16" "--kernels 30 --allocs 0"; do
        timeout 120 python3 "$here/graph_alloc_probe.py" $k
      done 2>&1 | tee "$OUT/alloc-probe.log"
      ;;
    gpu-check)
      stamp "gpu-check"
      timeout 560 "$D/gpu_check" --persistent --mode "${GPU_CHECK_MODE:-lstm}" --seed 2711 > "$OUT/gpu_check.log" 2>&1
      echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"
      grep -E '\| FAIL \|' "$OUT/gpu_check.log" | head
      ;;
  esac
done
stamp done
