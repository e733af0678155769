#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` (the one-cluster pushed forward making
# its input projection itself, Plan::input; CANDLE_RNN_PERSISTENT_FOLD=0 the GEMM before it):
#   tests:     the op's GPU tests (TESTS: a name filter, if any), then compute-sanitizer memcheck
#              and synccheck on the one-layer LSTM and the single-bias tests, and racecheck on the
#              single-bias test (one cluster, pushed, folded where the rule says);
#   speed:     graphed training | forward, µs an example, through the op's direct API in f16, the
#              GEMM (CANDLE_RNN_PERSISTENT_FOLD=0) | the default | GEMM | default, on one-cluster
#              shapes, LSTM and GRU;
#   gpu_check: gpu_check --persistent;
#   grid1, grid2, grid3: the grid beside PyTorch (results/2026-11-27-h100-grid/run.sh's parts).
#   results/2026-11-29-h200-folded-input/run.sh DIR OUT tests|speed|gpu_check|grid1|grid2|grid3
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
export RNN_TEST_REQUIRE_GPU=1
fold() { CANDLE_RNN_PERSISTENT_FOLD=$1 bench_us "" "${@:2}"; }
case $PART in
tests)
  stamp "GPU tests ${TESTS:-all}"; gpu_tests ${TESTS:-}
  for tool in memcheck synccheck racecheck; do
    stamp "$tool"
    tests="persistent_lstm_one_layer persistent_single_and_no_bias"
    [ $tool = racecheck ] && tests=persistent_single_and_no_bias
    timeout 300 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 $tests > "$OUT/$tool.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" "$OUT/$tool.log" | head -3
  done
  ;;
speed)
  stamp "GEMM | default | GEMM | default"
  for s in 1,32,30,128 1,32,200,128 1,8,30,128 1,16,30,128 1,32,30,256 1,128,30,128; do
    for c in gru lstm; do
      echo "$c $s | $(fold 0 $c $s op-f16-default) | $(fold "" $c $s op-f16-default) | $(fold 0 $c $s op-f16-default) | $(fold "" $c $s op-f16-default)"
    done
  done
  ;;
gpu_check) stamp "gpu_check --persistent"; gpu_check_persistent ;;
grid*) bash results/2026-11-27-h100-grid/run.sh "$D" "$OUT" "$PART" ;;
esac
stamp done
