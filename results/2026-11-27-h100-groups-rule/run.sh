#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR with the batch-group rule of
# results/2026-11-27-h100-groups-sanitize/ (about 8 samples a group, stacks past batch 32 in
# groups, layer by layer).
#   checks: the op's GPU tests; compute-sanitizer memcheck and racecheck on the small batch-group
#           test (now 8 groups);
#   stacks: stacks past batch 32 that ran as wavefronts in one group before, the default (now in
#           groups) against one group (graphed training | forward, µs an example, bf16);
#   grid1, grid2, grid3: results/2026-11-27-h100-grid/run.sh's passes (ours and PyTorch's TF32
#           and fp16 modules, graphed both orders, then eager), into OUT/grid.
#   results/2026-11-27-h100-groups-rule/run.sh DIR OUT checks|stacks|grid1|grid2|grid3
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct"
one() {  # groups cell shape variant -> "train forward"
  CANDLE_RNN_PERSISTENT_GROUPS=$1 timeout 90 "$D/bench_grid" $how --mode $2 --shape $3 --variants $4 \
    2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
    | awk -F'|' '{gsub(/ /,"",$8); gsub(/ /,"",$9); printf "%s %s", $8, $9}'
}
case $PART in
checks)
  stamp "GPU tests"
  RNN_TEST_REQUIRE_GPU=1 timeout 330 "$D/op-gpu-tests" --test-threads=1 > "$OUT/tests.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests.log" | head
  for tool in memcheck racecheck; do
    stamp "$tool"
    RNN_TEST_REQUIRE_GPU=1 timeout 120 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 \
      persistent_batch_groups > "$OUT/sanitizer-$tool.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result" "$OUT/sanitizer-$tool.log"
  done
  ;;
stacks)
  stamp "the default | one group"
  for s in 2,64,35,200 3,64,30,256 2,64,35,650 3,128,30,512; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(one "" $cell $s op-bf16-default) | $(one 1 $cell $s op-bf16-persistent)"
    done
  done | tee "$OUT/stacks.txt"
  ;;
grid1 | grid2 | grid3) bash results/2026-11-27-h100-grid/run.sh "$D" "$OUT" "$PART" ;;
esac
stamp done
