#!/usr/bin/env bash
# On the GPU machine: the crate's persistent kernels launched as cooperative kernels (main) or
# as plain launches (CANDLE_RNN_PERSISTENT_COOPERATIVE=0). First the GPU tests with plain
# launches; then graphed and eager training and forwards, µs an example, bf16 on the crate's
# kernels (`--api direct`), coop / plain / plain / coop per shape, twice.
#   results/2026-11-27-h100-plain-launch/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
stamp "GPU tests, plain launches"
CANDLE_RNN_PERSISTENT_COOPERATIVE=0 RNN_TEST_REQUIRE_GPU=1 timeout 240 "$D/op-gpu-tests" --test-threads=1 > "$OUT/tests-plain.log" 2>&1
echo "rc=$?"; grep -E "^test result" "$OUT/tests-plain.log"
how="--loss sum --input-grad --reps 10 --warmup 5 --api direct"
ours() {  # coop(1|0) graph-flag cell shape -> "train forward"
  CANDLE_RNN_PERSISTENT_COOPERATIVE=$1 timeout 90 "$D/bench_grid" --no-loop $2 $how --mode $3 --shape $4 --variants op-bf16-persistent 2>>"$OUT/stderr.txt" \
    | grep -E '^\| (Lstm|Gru) ' | awk -F'|' '{gsub(/ /,"",$8); gsub(/ /,"",$9); print $8, $9}'
}
for g in --graph ""; do
  stamp "${g:-eager}"
  for s in ${SHAPES:-1,32,30,512 1,32,30,1024 1,32,30,128 1,8,30,512 2,20,35,1500 2,20,35,650 1,128,30,512 3,32,30,512}; do
    for cell in gru lstm; do
      line="${g:-eager} $cell [$s]"
      for round in 1 2; do
        for c in 1 0 0 1; do line="$line | $([ $c = 1 ] && echo coop || echo plain) $(ours $c "$g" $cell $s)"; done
      done
      echo "$line"
    done
  done
done | tee "$OUT/table.txt"
stamp done
