#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: one thread-block cluster per batch group
# (CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 now takes plans of several groups: each group's blocks
# one cluster whose hardware barrier serves each step, the forward's h pushed through
# distributed shared memory), which has not run on a GPU; the default keeps one-cluster plans to
# one group (kernel.rs's shape_one_cluster).
#   checks: the op's persistent GPU tests with ONE_CLUSTER=1 (the batch-group test's batch 64
#           and 96 at hidden 46-64 then in one cluster per group); compute-sanitizer memcheck,
#           synccheck and racecheck on the batch-group test so;
#   speed: graphed training | forward, µs an example, bf16, ours: the rule | ONE_CLUSTER=1 |
#          ONE_CLUSTER=1 with PUSH=0 | the rule.
#   results/pending-group-clusters/run.sh DIR OUT checks|speed
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
export RNN_TEST_REQUIRE_GPU=1
one="CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1"
case $PART in
checks)
  stamp "persistent GPU tests, one cluster per group wherever it fits"
  env $one timeout 250 "$D/op-gpu-tests" --test-threads=1 persistent > "$OUT/tests-one.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests-one.log" | head
  for tool in memcheck synccheck racecheck; do
    stamp "$tool"
    env $one timeout 150 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 \
      persistent_batch_groups > "$OUT/sanitizer-$tool.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result" "$OUT/sanitizer-$tool.log"
  done
  ;;
speed)
  stamp "the rule | one cluster per group | the same, not pushed | the rule (training | forward)"
  p=op-bf16-persistent
  for s in 1,32,30,128 1,64,30,128 1,128,30,128 1,32,30,256 1,64,30,256 1,32,200,128; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(bench_us "" $cell $s $p) | $(eval "$one bench_us '' $cell $s $p")" \
        "| $(eval "$one CANDLE_RNN_PERSISTENT_PUSH=0 bench_us '' $cell $s $p") | $(bench_us "" $cell $s $p)"
    done
  done | tee "$OUT/speed.txt"
  ;;
esac
stamp done
