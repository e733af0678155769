#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: the one-cluster forward's h pushed with
# st.async into mbarrier-counted stages, no barrier between steps (recurrence_fwd.cu's PUSH), and
# one thread-block cluster per batch group (CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 takes plans of
# several groups: each group's blocks one cluster), which had not run on a GPU before.
#   tests:    the op's GPU tests (the default: PUSH in its one-cluster plans), then the persistent
#             ones with ONE_CLUSTER=1 (one cluster per group wherever it fits);
#   sanitize: compute-sanitizer memcheck, synccheck and racecheck on the one-layer LSTM test (the
#             default) and on the batch-group test with ONE_CLUSTER=1;
#   speed:    graphed training | forward, µs an example, bf16, ours: the rule | ONE_CLUSTER=1 |
#             ONE_CLUSTER=1 with PUSH=0 | the rule.
#   results/2026-11-27-h100-async-push/run.sh DIR OUT tests|sanitize|speed
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
export RNN_TEST_REQUIRE_GPU=1
one="CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1"
case $PART in
tests)
  stamp "the op's GPU tests"
  gpu_tests
  stamp "persistent GPU tests, one cluster per group wherever it fits"
  env $one timeout 250 "$D/op-gpu-tests" --test-threads=1 persistent > "$OUT/tests-one.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests-one.log" | head
  ;;
sanitize)
  for tool in memcheck synccheck racecheck; do
    stamp "$tool"
    timeout 150 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 \
      persistent_lstm_one_layer > "$OUT/sanitizer-$tool-one-layer.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result" "$OUT/sanitizer-$tool-one-layer.log"
    env $one timeout 150 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 \
      persistent_batch_groups > "$OUT/sanitizer-$tool-groups.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result" "$OUT/sanitizer-$tool-groups.log"
  done
  ;;
speed)
  stamp "the rule | one cluster per group | the same, not pushed | the rule (training | forward)"
  p=op-bf16-persistent
  for s in 1,32,30,128 1,64,30,128 1,128,30,128 1,32,30,256 1,64,30,256 1,32,200,128 1,8,30,256 1,16,30,128; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(bench_us "" $cell $s $p) | $(eval "$one bench_us '' $cell $s $p")" \
        "| $(eval "$one CANDLE_RNN_PERSISTENT_PUSH=0 bench_us '' $cell $s $p") | $(bench_us "" $cell $s $p)"
    done
  done | tee "$OUT/speed.txt"
  ;;
esac
stamp done
