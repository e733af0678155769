#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR:
#   sweep (binaries of fba3798): deep stacks past batch 32 (bf16, graphed training | forward, µs
#          an example), ours in 1, 4 and 8 batch groups (forced through
#          CANDLE_RNN_PERSISTENT_GROUPS) against cuDNN's Standard and the default, to place the
#          rule of kernel.rs's `shape_groups` for stacks deeper than two layers and choose.rs's
#          inference rule;
#   checks (binaries of the rule that followed): the op's GPU tests; the default against
#          Standard on the sweep's shapes, and eagerly f16 [30, 128, 3 x 512] against
#          PersistStatic;
#   grid1, grid2, grid3: results/2026-11-27-h100-grid/run.sh's passes, into OUT/grid.
#   results/pending-deep-stacks/run.sh DIR OUT sweep|checks|grid1|grid2|grid3
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
shapes="3,128,30,512 3,128,200,512 3,128,30,256 3,128,30,128 3,64,30,128 4,64,30,256 2,128,30,512"
case $PART in
sweep)
stamp "the default | ours in 1 | 4 | 8 groups | Standard"
for s in $shapes; do
  for cell in lstm gru; do
    echo "$cell [$s] | $(bench_us "" $cell $s op-bf16-default) | $(bench_us 1 $cell $s op-bf16-persistent)" \
      "| $(bench_us 4 $cell $s op-bf16-persistent) | $(bench_us 8 $cell $s op-bf16-persistent)" \
      "| $(bench_us "" $cell $s op-bf16-standard)"
  done
done | tee "$OUT/stacks.txt"
;;
checks)
  stamp "GPU tests"; gpu_tests
  stamp "the default | Standard"
  for s in $shapes 3,64,30,512 3,96,30,512 4,128,30,256; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(bench_us "" $cell $s op-bf16-default) | $(bench_us "" $cell $s op-bf16-standard)"
    done
  done | tee "$OUT/defaults.txt"
  stamp "eager f16 LSTM [30, 128, 3 x 512]: the default | PersistStatic (training | forward)"
  for v in op-f16-default op-f16-static op-f16-default; do
    timeout 90 "$D/bench_grid" --no-loop --loss sum --input-grad --reps 10 --warmup 5 --api direct \
      --mode lstm --shape 3,128,30,512 --variants $v 2>>"$OUT/stderr.txt" | grep -E '^\| Lstm '
  done | tee "$OUT/eager-f16.txt"
  ;;
grid1 | grid2 | grid3) bash results/2026-11-27-h100-grid/run.sh "$D" "$OUT" "$PART" ;;
esac
stamp done
