#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: the forward's pushed exchange
# (recurrence_fwd.cu's PUSH: each step's h stored into the shared memory of every block of the
# layer's one cluster, no round trip through L2), (by default since this run).
#   checks: the op's persistent GPU tests with CANDLE_RNN_PERSISTENT_PUSH=1 (the rule's
#           one-cluster shapes push), then with ONE_CLUSTER=1 too (every layer that fits in one
#           cluster); compute-sanitizer memcheck, racecheck and synccheck on the one-layer LSTM
#           test so (batch 1, 5 and 32, hidden 64-200);
#   speed: graphed training | forward, µs an example, bf16, ours: the rule's plan | one cluster
#          | one cluster pushed | the rule's.
#   results/2026-11-27-h100-push/run.sh DIR OUT checks|speed
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
export RNN_TEST_REQUIRE_GPU=1
one="CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1"
push="CANDLE_RNN_PERSISTENT_PUSH=1"
case $PART in
checks)
  stamp "persistent GPU tests, pushed where the rule runs one cluster"
  env $push timeout 200 "$D/op-gpu-tests" --test-threads=1 persistent > "$OUT/tests-push.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests-push.log" | head
  stamp "persistent GPU tests, one cluster wherever it fits, pushed"
  env $one $push timeout 200 "$D/op-gpu-tests" --test-threads=1 persistent > "$OUT/tests-one-push.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests-one-push.log" | head
  for tool in memcheck synccheck racecheck; do
    stamp "$tool"
    env $one $push timeout 150 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 \
      persistent_lstm_one_layer > "$OUT/sanitizer-$tool.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result" "$OUT/sanitizer-$tool.log"
  done
  ;;
speed)
  stamp "the rule | one cluster | one cluster pushed | the rule (training | forward)"
  p=op-bf16-persistent
  for s in 1,32,30,128 1,16,30,128 1,32,30,64 1,8,30,256 1,32,30,256 1,32,200,128; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(bench_us "" $cell $s $p) | $(eval "$one bench_us '' $cell $s $p")" \
        "| $(eval "$one $push bench_us '' $cell $s $p") | $(bench_us "" $cell $s $p)"
    done
  done | tee "$OUT/speed.txt"
  ;;
esac
stamp done
