#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: the one-cluster backward without a
# barrier between steps (recurrence_bwd.cu's PUSH: each block multiplies its own units' gate
# gradients by their rows of W_hh and pushes the f32 parts of dh_{t-1} with st.async into the
# blocks that own the units), which had not run on a GPU before, by default in every
# one-cluster plan of half elements; and the small-hidden rules (groups of 4 from batch 8).
#   tests:    the op's GPU tests (the default), then the persistent ones with ONE_CLUSTER=1
#             (one cluster per group wherever it fits);
#   sanitize: compute-sanitizer memcheck, synccheck and racecheck on the one-layer LSTM test,
#             the batch-group test with ONE_CLUSTER=1 and the GRU test;
#   speed:    graphed training | forward, µs an example, bf16, ours: the default (both passes
#             pushed) | the backward through L2 (CANDLE_RNN_PERSISTENT_PUSH=1,0) | the default;
#   lab:      the harness (scripts/persistent-lab/, nvcc here) at hidden 128, batches 4 and 16,
#             one cluster of 8 blocks: the backward through L2 against pushed, output compared.
#   tf32:     after the push took TF32 operands too (the backward only): the op's GPU tests,
#             memcheck on the TF32 test, then graphed training | forward in TF32, ours: the
#             default (backward pushed) | through L2 (PUSH=0,0) | the default, and the default's
#             kernel (cuDNN's PersistStaticSmallH for GRUs at hidden 128).
#   tf32checks: then the persistent GPU tests with ONE_CLUSTER=1, synccheck and racecheck on the
#             TF32 test (one layer at batch 3 in one cluster, pushed), gpu_check --persistent.
#   results/2026-11-27-h100-pushed-backward/run.sh DIR OUT tests|sanitize|speed|lab|tf32|tf32checks
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
    for t in persistent_lstm_one_layer persistent_gru; do
      timeout 150 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 $t \
        > "$OUT/sanitizer-$tool-$t.log" 2>&1
      echo "$t rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result" "$OUT/sanitizer-$tool-$t.log"
    done
    env $one timeout 150 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 \
      persistent_batch_groups > "$OUT/sanitizer-$tool-groups.log" 2>&1
    echo "groups rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result" "$OUT/sanitizer-$tool-groups.log"
  done
  ;;
speed)
  stamp "pushed | backward through L2 | pushed (training | forward)"
  p=op-bf16-persistent
  for s in 1,32,30,128 1,128,30,128 1,16,30,128 1,20,30,128 1,4,30,128 1,8,30,256 1,64,30,256 1,32,200,128; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(bench_us "" $cell $s $p) | $(CANDLE_RNN_PERSISTENT_PUSH=1,0 bench_us "" $cell $s $p)" \
        "| $(bench_us "" $cell $s $p)"
    done
  done | tee "$OUT/speed.txt"
  ;;
tf32)
  stamp "the op's GPU tests"
  gpu_tests
  stamp "memcheck on the TF32 test"
  timeout 200 "$CS" --tool memcheck "$D/op-gpu-tests" --test-threads=1 persistent_tf32 \
    > "$OUT/sanitizer-memcheck-tf32.log" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|^test result" "$OUT/sanitizer-memcheck-tf32.log"
  stamp "TF32: pushed | through L2 | pushed | the default (training | forward)"
  p=op-tf32-persistent
  for s in 1,32,30,128 1,48,30,128 1,20,30,128 1,8,30,256 1,32,200,128; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(bench_us "" $cell $s $p) | $(CANDLE_RNN_PERSISTENT_PUSH=0 bench_us "" $cell $s $p)" \
        "| $(bench_us "" $cell $s $p) | $(bench_us "" $cell $s op-tf32-default)"
    done
  done | tee "$OUT/tf32.txt"
  ;;
tf32checks)
  stamp "persistent GPU tests, one cluster per group wherever it fits"
  env $one timeout 150 "$D/op-gpu-tests" --test-threads=1 persistent > "$OUT/tests-one.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests-one.log" | head
  for tool in synccheck racecheck; do
    stamp "$tool on the TF32 test"
    timeout 100 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 persistent_tf32 \
      > "$OUT/sanitizer-$tool-tf32.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result" "$OUT/sanitizer-$tool-tf32.log"
  done
  stamp "gpu_check --persistent"
  timeout 380 "$D/gpu_check" --persistent --seed 2711 > "$OUT/gpu_check.log" 2>&1
  echo "rc=$?"; tail -1 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"
  grep -E '\| FAIL \|' "$OUT/gpu_check.log" | head
  ;;
lab)
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  export PATH=$(dirname "$nvcc"):$PATH
  for b in 4 16; do
    for push in 0 1; do
      bash scripts/persistent-lab/build.sh /tmp/lab b$b-p$push -DHID=128 -DBATCH=$b -DUNITS=16 \
        -DNBUF=2 -DLAB_BWD -DONE_CLUSTER=1 -DPUSH=$push >> "$OUT/lab-build.log" 2>&1 || echo "build b$b p$push failed"
    done
    stamp "batch $b: through L2 | pushed | through L2 | pushed"
    /tmp/lab/lab-b$b-p0 50 /tmp/lab/out-b$b-p0 | grep -E "^config|us per|mean"
    /tmp/lab/lab-b$b-p1 50 /tmp/lab/out-b$b-p1 /tmp/lab/out-b$b-p0 | grep -E "^config|us per|mean|compare"
    /tmp/lab/lab-b$b-p0 50 | grep "us per"
    /tmp/lab/lab-b$b-p1 50 | grep "us per"
  done 2>&1 | tee "$OUT/lab.txt"
  stamp "memcheck, racecheck on the pushed harness at batch 4"
  for tool in memcheck racecheck synccheck; do
    timeout 120 "$CS" --tool $tool /tmp/lab/lab-b4-p1 2 > /tmp/lab/$tool.log 2>&1
    echo "$tool rc=$?"; grep -E "SUMMARY" /tmp/lab/$tool.log; grep -E "Invalid|hazard" /tmp/lab/$tool.log | head -4
  done | tee "$OUT/lab-sanitize.txt"
  ;;
esac
stamp done
