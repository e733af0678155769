#!/usr/bin/env bash
# On the GPU machine: the forward's multicast exchange (CANDLE_RNN_PERSISTENT_MULTICAST, by
# default kernel.rs's shape_multicast) against none (=1). First the GPU tests and gpu_check
# --persistent at the default, the new GPU test under compute-sanitizer; then graphed training
# and inference forwards, µs an example, bf16 on the crate's kernels (`--api direct`),
# none / default / default / none, twice, and PyTorch's fp16 module on the GRU shapes.
# Two commands: `checks` (tests, gpu_check, sanitizers), then `bench`.
#   results/2026-11-27-h100-multicast/run.sh DIR OUT checks|bench
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
if [ "$PART" = checks ]; then
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 300 "$D/op-gpu-tests" --test-threads=1 > "$OUT/tests.log" 2>&1
echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests.log" | head
stamp "gpu_check --persistent"
timeout 400 "$D/gpu_check" --persistent --seed 2711 > "$OUT/gpu_check.log" 2>&1
echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"; grep -E '\| (FAIL|fail)' "$OUT/gpu_check.log" | head
if [ -n "$CS" ]; then
  for tool in memcheck synccheck racecheck; do
    stamp "$tool"
    RNN_TEST_REQUIRE_GPU=1 timeout 400 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 \
      persistent_multicast_forward > "$OUT/sanitizer-$tool.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result" "$OUT/sanitizer-$tool.log"
  done
fi
exit 0
fi
how="--loss sum --input-grad --reps 10 --warmup 5 --api direct"
ours() {  # multicast(1|"") cell shape -> "train forward"
  CANDLE_RNN_PERSISTENT_MULTICAST=$1 timeout 90 "$D/bench_grid" --no-loop --graph $how --mode $2 --shape $3 \
    --variants op-bf16-persistent 2>>"$OUT/stderr.txt" \
    | grep -E '^\| (Lstm|Gru) ' | awk -F'|' '{gsub(/ /,"",$8); gsub(/ /,"",$9); print $8, $9}'
}
stamp "graphed: none / default"
for s in ${SHAPES:-1,32,30,512 1,32,30,1024 1,16,30,512 1,8,30,512 1,32,30,256 1,32,200,512 1,1,30,512}; do
  for cell in gru lstm; do
    line="$cell [$s]"
    for round in 1 2; do
      for c in 1 d d 1; do line="$line | $([ $c = 1 ] && echo none || echo mc) $(ours "$([ $c = 1 ] && echo 1)" $cell $s)"; done
    done
    echo "$line"
  done
done | tee "$OUT/table.txt"
stamp "PyTorch fp16, graphed"
for s in 1,32,30,512 1,32,30,1024; do
  for cell in gru lstm; do
    echo "torch $cell [$s] $(timeout 100 python3 scripts/torch_reference.py --grid --graph --loss sum --input-grad --reps 10 \
      --warmup 5 --only $cell,$s --impls torch-fp16 2>>"$OUT/stderr.txt" | grep -iE "^\| *$cell" | head -1 | awk -F'|' '{print $8, $9}')"
  done
done | tee "$OUT/torch.txt"
stamp done
