#!/usr/bin/env bash
# On the GPU machine: the forward's multicast at batches of several chunks (after run.sh's
# batch-32 runs). The persistent GPU tests (the multicast's at batch 40, the chunked ones) and
# the multicast's under memcheck; then bf16 on the crate's kernels (`--api direct`), graphed
# training | inference forward, µs an example, none / the rule / the rule / none.
#   results/2026-11-27-h100-multicast/run-chunks.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
stamp "persistent GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 persistent_ > "$OUT/tests.log" 2>&1
echo "rc=$?"; grep -E "^test |^test result" "$OUT/tests.log"
stamp memcheck
RNN_TEST_REQUIRE_GPU=1 timeout 100 "$CS" --tool memcheck "$D/op-gpu-tests" --test-threads=1 \
  persistent_multicast_forward > "$OUT/sanitizer-memcheck.log" 2>&1
echo "rc=$?"; grep -E "ERROR SUMMARY|^test result" "$OUT/sanitizer-memcheck.log"
how="--loss sum --input-grad --reps 10 --warmup 5 --api direct"
ours() {  # multicast(1|"") cell shape -> "train forward"
  CANDLE_RNN_PERSISTENT_MULTICAST=$1 timeout 60 "$D/bench_grid" --no-loop --graph $how --mode $2 --shape $3 \
    --variants op-bf16-persistent 2>>"$OUT/stderr.txt" \
    | grep -E '^\| (Lstm|Gru) ' | awk -F'|' '{gsub(/ /,"",$8); gsub(/ /,"",$9); print $8, $9}'
}
stamp "graphed: none / rule"
for s in ${SHAPES:-1,128,30,512 1,128,30,256 1,64,30,512 1,48,30,512}; do
  for cell in gru lstm; do
    line="$cell [$s]"
    for c in 1 d d 1; do line="$line | $([ $c = 1 ] && echo none || echo mc) $(ours "$([ $c = 1 ] && echo 1)" $cell $s)"; done
    echo "$line"
  done
done | tee "$OUT/table-chunks.txt"
stamp done
