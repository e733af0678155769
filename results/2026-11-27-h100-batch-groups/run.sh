#!/usr/bin/env bash
# On the GPU machine: branch batch-groups (a batch of several chunks split into groups, each an
# independent recurrence on blocks of its own) against one group. DIR holds binaries of
# scripts/devbin.sh at the branch.
#   tests: the op's GPU tests; gpu_check: gpu_check --persistent;
#   bench: graphed training | forward, µs an example, on the crate's kernels: one group
#          (CANDLE_RNN_PERSISTENT_GROUPS=1) / the rule's groups / one / the rule's, then cuDNN's
#          Standard in the same dtype.
#   results/2026-11-27-h100-batch-groups/run.sh DIR OUT tests|gpu_check|bench
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
case $PART in
tests)
  stamp "GPU tests"
  RNN_TEST_REQUIRE_GPU=1 timeout 330 "$D/op-gpu-tests" --test-threads=1 > "$OUT/tests.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests.log" | head
  ;;
gpu_check)
  stamp "gpu_check --persistent"
  timeout 560 "$D/gpu_check" --persistent --seed 2711 > "$OUT/gpu_check.log" 2>&1
  echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"
  grep -E '\| FAIL \|' "$OUT/gpu_check.log" | head
  ;;
bench)
  how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct"
  one() {  # groups cell shape variant -> "train forward"
    CANDLE_RNN_PERSISTENT_GROUPS=$1 timeout 90 "$D/bench_grid" $how --mode $2 --shape $3 --variants $4 \
      2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
      | awk -F'|' '{gsub(/ /,"",$8); gsub(/ /,"",$9); printf "%s %s", $8, $9}'
  }
  stamp "graphed training | forward: one group | rule | one | rule | Standard"
  for v in bf16 tf32; do
    for s in 1,64,30,512 1,128,30,512 1,128,30,128 1,128,30,256 1,256,30,512 1,128,30,1024 1,256,30,128; do
      [ $v = tf32 ] && [ $s != 1,128,30,512 ] && [ $s != 1,64,30,512 ] && continue
      for cell in lstm gru; do
        p=op-$v-persistent
        echo "$v $cell [$s] | $(one 1 $cell $s $p) | $(one "" $cell $s $p) | $(one 1 $cell $s $p)" \
          "| $(one "" $cell $s $p) | $(one "" $cell $s op-$v-standard)"
      done
    done
  done | tee "$OUT/table.txt"
  ;;
esac
stamp done
