#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR at main after the batch-group rule of
# results/2026-11-27-h100-groups-rule/ and its follow-ups, which have not run on a GPU: stacks
# deeper than two layers keep one group (the wavefront) up to batch 64, and the default-kernel
# GPU test's stacks at batches 61 and 64.
#   tests: the op's GPU tests;
#   synccheck: compute-sanitizer synccheck on the small batch-group test (8 groups);
#   gpu_check: gpu_check --persistent with the rule's groups (7 and 8 groups of odd sizes);
#   stacks: stacks at batches 64-128, the default against ours in one group, in 8 groups and
#           cuDNN's Standard (graphed training | forward, µs an example, bf16);
#   sweep: the knobs of persistent/tuning.rs on the grid's shapes furthest from issue 33's and
#          34's targets ([30, 128, 1024], where cuDNN leads ours; GRU [30, 32, 128] and
#          [30, 32, 1024]), each line one setting (graphed training | forward, bf16).
#   results/pending-groups-rule-check/run.sh DIR OUT tests|synccheck|gpu_check|stacks|sweep
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
case $PART in
tests)
  stamp "GPU tests"; gpu_tests
  ;;
synccheck)
  stamp synccheck
  RNN_TEST_REQUIRE_GPU=1 timeout 200 "$CS" --tool synccheck --num-cuda-barriers 64 \
    "$D/op-gpu-tests" --test-threads=1 persistent_batch_groups > "$OUT/sanitizer-synccheck.log" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|^test result" "$OUT/sanitizer-synccheck.log"
  ;;
gpu_check)
  stamp "gpu_check --persistent"; gpu_check_persistent
  ;;
stacks)
  stamp "the default | ours in 1 | 8 groups | Standard"
  for s in 3,64,30,256 3,64,30,512 3,96,30,512 2,64,35,200 4,128,30,256; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(bench_us "" $cell $s op-bf16-default) | $(bench_us 1 $cell $s op-bf16-persistent)" \
        "| $(bench_us 8 $cell $s op-bf16-persistent) | $(bench_us "" $cell $s op-bf16-standard)"
    done
  done | tee "$OUT/stacks.txt"
  ;;
sweep)
  p=op-bf16-persistent
  knobs() {  # cell shape, then settings KNOB=value of CANDLE_RNN_PERSISTENT_KNOB (empty: the rule's)
    local cell=$1 shape=$2 setting groups assign; shift 2
    for setting in "$@"; do
      groups="" assign=""
      case $setting in
        "") ;;
        GROUPS=*) groups=${setting#GROUPS=} ;;
        *) assign="CANDLE_RNN_PERSISTENT_$setting" ;;
      esac
      echo "$cell [$shape] ${setting:-rule} | $(eval "$assign bench_us '$groups' $cell $shape $p")"
    done
  }
  stamp "knobs: graphed training | forward"
  for cell in lstm gru; do
    echo "$cell [1,128,30,1024] Standard | $(bench_us "" $cell 1,128,30,1024 op-bf16-standard)"
    knobs $cell 1,128,30,1024 "" UNITS=12 UNITS=16 UNITS=8,16 CLUSTER=1 CLUSTER=1,4 MULTICAST=1 \
      MULTICAST=4 CHUNK=32
    knobs $cell 1,32,30,128 "" ONE_CLUSTER=1 GROUPS=1 GROUPS=8 UNITS=8 UNITS=16
    knobs $cell 1,32,30,1024 "" GROUPS=1 GROUPS=4 UNITS=16 CLUSTER=1 CLUSTER=4
  done | tee "$OUT/sweep.txt"
  ;;
esac
stamp done
