#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh (or its bench_grid, gpu_check and
# op-gpu-tests alone) in DIR, with DIR/lab-* and DIR/overlap_probe built by nvcc (README.md says
# how):
#   early:    the multicast ring's early refill (recurrence_fwd.cu issues chunk c + 2 before chunk
#             c's gate math): the lab's [30, 128, 1024] forwards with the ring against without
#             clusters, outputs compared; compute-sanitizer memcheck, racecheck and synccheck on
#             the lab's ring at hidden 256, batch 96 (GRU and LSTM) and racecheck and synccheck on
#             the library's ring forward ([3, 100, 1024] bf16); graphed bf16 [30, 128, 1024] on
#             ours with the ring and without multicast, alternated twice (OUT/early.log).
#   overlap:  overlap_probe (products and gate math of a batch-128 step in turn, or in
#             specialised warps) at 1000 steps (OUT/overlap.log).
#   grid:     scripts/compare-grid.sh in half precision only (the op's bf16 and f16 defaults,
#             PyTorch's fp16 module; all six passes, 10 repetitions after 3 of warm-up), its JSON
#             and table in OUT/grid.tgz, the table in OUT/table.md.
#   b256:     batch 256 at hidden 64 and 128 (one layer, bf16, graphed training | forward), the
#             rule's 16 groups of 16 samples against 8 groups (CANDLE_RNN_PERSISTENT_GROUPS=8),
#             alternated twice (OUT/b256.log).
#   b256fwd:  after the rule that gives ours one layer's inference past batch 128 up to hidden
#             256: bf16 forwards on the default, ours and `Standard`, graphed then eager
#             (OUT/b256-rule.log); the GPU test of the default's rules.
#   tests:    all of the op's GPU tests, then gpu_check --persistent (OUT/tests.log,
#             OUT/gpu_check.log).
#   results/2026-11-29-h200-refill-batch256/run.sh DIR OUT early|overlap|grid|b256|b256fwd|tests
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
how="--loss sum --input-grad"
case $PART in
early)
  {
    for pair in gru-cl1:gru-ring2 lstm-cl1:lstm-ring2; do
      ref=${pair%%:*} new=${pair#*:}
      echo "== $ref"; timeout 60 "$D/lab-$ref" 20 "$OUT/$ref.out"
      echo "== $new"; timeout 60 "$D/lab-$new" 20 "$OUT/$new.out" "$OUT/$ref.out"
    done
    rm -f "$OUT"/*.out
    for lab in san-ring san-ring-lstm; do
      for tool in memcheck racecheck synccheck; do
        timeout 120 "$CS" --tool $tool --print-limit 20 "$D/lab-$lab" 1 > "$OUT/cs-$lab-$tool.log" 2>&1
        echo "$lab $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/cs-$lab-$tool.log" | tail -1)"
      done
    done
    for tool in racecheck synccheck; do
      timeout 200 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop $how --reps 1 --warmup 0 \
        --api direct --phase forward --mode gru --shape 1,100,3,1024 --variants op-bf16-persistent \
        > "$OUT/cs-lib-$tool.log" 2>&1
      echo "library $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/cs-lib-$tool.log" | tail -1)"
    done
    for c in gru lstm; do
      row="$c 1,128,30,1024 bf16"
      for round in 1 2; do
        row="$row | ring $(bench_us "" $c 1,128,30,1024 op-bf16-persistent)"
        row="$row | none $(CANDLE_RNN_PERSISTENT_MULTICAST=1 bench_us "" $c 1,128,30,1024 op-bf16-persistent)"
      done
      echo "$row"
    done
  } 2>&1 | tee "$OUT/early.log"
  ;;
overlap)
  timeout 120 "$D/overlap_probe" 1000 2>&1 | tee "$OUT/overlap.log"
  ;;
grid)
  half_grid
  ;;
b256)
  for c in lstm gru; do
    for s in 1,256,30,128 1,256,30,64; do
      row="$c $s bf16"
      for round in 1 2; do
        row="$row | rule $(bench_us "" $c $s op-bf16-default) | 8 groups $(bench_us 8 $c $s op-bf16-default)"
      done
      echo "$row"
    done
  done 2>&1 | tee "$OUT/b256.log"
  ;;
b256fwd)
  # (Before the rule, run with the command README.md gives: OUT/b256-forward.log.)
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for c in lstm gru; do
      for s in 1,256,30,128 1,256,30,256 1,256,30,512 1,200,200,128 3,256,30,128; do
        echo "${g:-eager} $c $s | $(timeout 80 "$D/bench_grid" --no-loop $g $how --reps 10 --warmup 5 --api direct \
          --phase forward --mode $c --shape $s --variants op-bf16-default,op-bf16-persistent,op-bf16-standard \
          2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' | awk -F'|' '{printf "%s %s | ", $7, $9}')"
      done
    done
  done 2>&1 | tee "$OUT/b256-rule.log"
  stamp "GPU test"; gpu_tests the_default_serves
  ;;
tests)
  stamp "GPU tests"; gpu_tests
  stamp "gpu_check --persistent"; gpu_check_persistent
  ;;
esac
