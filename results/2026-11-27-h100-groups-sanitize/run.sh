#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR at main after the batch groups
# (results/2026-11-27-h100-batch-groups/).
#   test: the small GPU test of batch groups (batch 64 in 2 groups, 96 in 3; LSTM and GRU,
#         bf16 and f16);
#   memcheck, synccheck, racecheck: compute-sanitizer on that test;
#   gpu_check2: gpu_check --persistent with two groups wherever they divide the batch (stacks
#         then run layer by layer, dropout between);
#   stacks: stacks at batch 64-128 in 4 groups, layer by layer, against cuDNN's Standard and
#         ours in one group;
#   small: single layers at batches up to 32 in 1, 2, 4 and 8 groups (the rule gives them one;
#         more groups take fewer rows of h into each block a step).
#   wide: hidden 650-1500 at batches 20-128 in 1, 2 and 4 groups, against Standard;
#   more: batches 64 and 128 in 2-8 groups; stacks at batch 32 and 128 in 1-8 groups;
#   tf32: f32 in TF32 math, single layers at batches 32-128 in 1-8 groups, against Standard;
#   stacks, small, wide, more and tf32 print graphed training | forward, µs an example.
#   results/2026-11-27-h100-groups-sanitize/run.sh DIR OUT test|memcheck|synccheck|racecheck|gpu_check2|stacks|small|wide|more|tf32
#   (SANITIZER_TIMEOUT=S bounds a compute-sanitizer run; 560 s by default.)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
filter=persistent_batch_groups
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct"
one() {  # groups cell shape variant -> "train forward"
  CANDLE_RNN_PERSISTENT_GROUPS=$1 timeout 90 "$D/bench_grid" $how --mode $2 --shape $3 --variants $4 \
    2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
    | awk -F'|' '{gsub(/ /,"",$8); gsub(/ /,"",$9); printf "%s %s", $8, $9}'
}
case $PART in
test)
  stamp "GPU test $filter"
  RNN_TEST_REQUIRE_GPU=1 timeout 300 "$D/op-gpu-tests" --test-threads=1 --nocapture $filter \
    > "$OUT/test.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/test.log" | head
  ;;
memcheck | synccheck | racecheck)
  extra=""
  [ "$PART" = synccheck ] && extra="--num-cuda-barriers 64"
  stamp "$PART"
  RNN_TEST_REQUIRE_GPU=1 timeout "${SANITIZER_TIMEOUT:-560}" "$CS" --tool "$PART" $extra "$D/op-gpu-tests" --test-threads=1 \
    $filter > "$OUT/sanitizer-$PART.log" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result|Hazard|kernel" "$OUT/sanitizer-$PART.log" \
    | sort | uniq -c | sort -rn | head -12
  ;;
gpu_check2)
  stamp "gpu_check --persistent, CANDLE_RNN_PERSISTENT_GROUPS=2"
  CANDLE_RNN_PERSISTENT_GROUPS=2 timeout 560 "$D/gpu_check" --persistent --seed 2711 > "$OUT/gpu_check2.log" 2>&1
  echo "rc=$?"; tail -2 "$OUT/gpu_check2.log"; grep -c '| ok |' "$OUT/gpu_check2.log"
  grep -E '\| FAIL \|' "$OUT/gpu_check2.log" | head
  ;;
stacks)
  stamp "Standard | ours, one group | ours, 4 groups | Standard"
  for s in 3,128,30,512 3,128,200,512 2,128,30,512 2,64,35,650; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(one "" $cell $s op-bf16-standard) | $(one 1 $cell $s op-bf16-persistent)" \
        "| $(one 4 $cell $s op-bf16-persistent) | $(one "" $cell $s op-bf16-standard)"
    done
  done | tee "$OUT/stacks.txt"
  ;;
small)
  stamp "ours in 1 | 2 | 4 | 8 groups | 1 group again"
  for s in 1,32,30,512 1,32,30,256 1,32,30,128 1,16,30,256 1,8,30,512 1,32,200,512; do
    for cell in gru lstm; do
      p=op-bf16-persistent
      echo "$cell [$s] | $(one 1 $cell $s $p) | $(one 2 $cell $s $p) | $(one 4 $cell $s $p)" \
        "| $(one 8 $cell $s $p) | $(one 1 $cell $s $p)"
    done
  done | tee "$OUT/small.txt"
  ;;
wide)
  stamp "ours in 1 | 2 | 4 groups | Standard"
  for s in 1,64,30,1024 1,32,30,1024 1,128,30,1024 2,20,35,1500 1,64,30,650 2,32,35,650; do
    for cell in lstm gru; do
      p=op-bf16-persistent
      echo "$cell [$s] | $(one 1 $cell $s $p) | $(one 2 $cell $s $p) | $(one 4 $cell $s $p)" \
        "| $(one "" $cell $s op-bf16-standard)"
    done
  done | tee "$OUT/wide.txt"
  ;;
more)
  p=op-bf16-persistent
  stamp "ours in 2 | 4 | 8 groups"
  for s in 1,64,30,512 1,128,30,512 1,64,30,128 1,128,30,128; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(one 2 $cell $s $p) | $(one 4 $cell $s $p) | $(one 8 $cell $s $p)"
    done
  done | tee "$OUT/more.txt"
  stamp "the default | ours in 1 | 2 | 4 (| 8) groups | Standard"
  for s in 3,32,30,512 3,32,30,128 3,32,200,512 3,128,30,128 3,128,30,1024; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(one "" $cell $s op-bf16-default) | $(one 1 $cell $s $p) | $(one 2 $cell $s $p)" \
        "| $(one 4 $cell $s $p) | $(one 8 $cell $s $p) | $(one "" $cell $s op-bf16-standard)"
    done
  done | tee -a "$OUT/more.txt"
  ;;
tf32)
  p=op-tf32-persistent
  stamp "TF32: ours in 1 | 2 | 4 | 8 groups | Standard"
  for s in 1,32,30,512 1,32,30,256 1,64,30,512 1,128,30,512 1,32,30,1024 1,64,30,1024; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(one 1 $cell $s $p) | $(one 2 $cell $s $p) | $(one 4 $cell $s $p)" \
        "| $(one 8 $cell $s $p) | $(one "" $cell $s op-tf32-standard)"
    done
  done | tee "$OUT/tf32.txt"
  ;;
esac
stamp done
