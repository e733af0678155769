#!/usr/bin/env bash
# On the GPU machine: a layer's persistent kernels launched as now (main) or with programmatic
# dependent launch (CANDLE_RNN_PERSISTENT_PDL=1: blocks fill their weight tiles while the kernel
# before them ends). First the GPU tests with PDL; then graphed training and forwards, µs an
# example, bf16 on the crate's kernels (`--api direct`), main / pdl / pdl / main, twice.
#   results/2026-11-27-h100-pdl/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
stamp "GPU tests, PDL"
CANDLE_RNN_PERSISTENT_PDL=1 RNN_TEST_REQUIRE_GPU=1 timeout 240 "$D/op-gpu-tests" --test-threads=1 > "$OUT/tests-pdl.log" 2>&1
echo "rc=$?"; grep -E "^test result" "$OUT/tests-pdl.log"
how="--loss sum --input-grad --reps 10 --warmup 5 --api direct"
ours() {  # pdl(1|0) graph-flag cell shape -> "train forward"
  CANDLE_RNN_PERSISTENT_PDL=$1 timeout 90 "$D/bench_grid" --no-loop $2 $how --mode $3 --shape $4 --variants op-bf16-persistent 2>>"$OUT/stderr.txt" \
    | grep -E '^\| (Lstm|Gru) ' | awk -F'|' '{gsub(/ /,"",$8); gsub(/ /,"",$9); print $8, $9}'
}
for g in --graph; do
  stamp "${g:-eager}"
  for s in ${SHAPES:-1,32,30,512 1,32,30,1024 1,32,30,128 1,8,30,512 2,20,35,1500 1,128,30,512 1,32,200,512}; do
    for cell in gru lstm; do
      line="${g:-eager} $cell [$s]"
      for round in 1 2; do
        for c in 0 1 1 0; do line="$line | $([ $c = 1 ] && echo pdl || echo main) $(ours $c "$g" $cell $s)"; done
      done
      echo "$line"
    done
  done
done | tee "$OUT/table.txt"
stamp done
