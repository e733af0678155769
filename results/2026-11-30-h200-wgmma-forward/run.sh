#!/usr/bin/env bash
# On the GPU machine, bench_grid, gpu_check and op-gpu-tests as scripts/devbin.sh builds them in
# DIR:
#   check:  the op's GPU tests of the wgmma forward (persistent_wgmma_*) into OUT/tests.log, each
#           A/B shape's inference plan (OUT/plans.txt), then compute-sanitizer memcheck,
#           racecheck and synccheck on an inference forward of 4 steps at [128, 1024], LSTM and
#           GRU (OUT/sanitize.log, the logs in OUT/sanitize.tgz).
#   ab:     CANDLE_RNN_PERSISTENT_WGMMA unset / 0 / unset (the wgmma forward by the rule, or the
#           chooser's kernel without it: cuDNN's `Standard`), graphed then eager, forwards alone
#           (µs an example) at AB_SHAPES (VARIANT:CELL:L,B,T,H ...) into OUT/ab.log.
#   grid:   ../2026-11-30-h200-side-streams/run.sh's (GRID=half|tf32).
#   results/2026-11-30-h200-wgmma-forward/run.sh DIR OUT check|ab|grid
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
shapes=${AB_SHAPES:-"op-bf16-default:lstm:1,128,30,1024 op-f16-default:gru:1,128,30,1024
  op-bf16-default:lstm:3,128,30,1024 op-f16-default:gru:3,128,30,1024
  op-bf16-default:lstm:3,128,200,1024 op-bf16-default:gru:3,128,200,1024
  op-bf16-default:lstm:1,96,30,1024 op-f16-default:lstm:1,128,30,1024"}
case $PART in
check)
  stamp "GPU tests (wgmma)"; gpu_tests persistent_wgmma
  for spec in $shapes; do
    split_spec "$spec"
    CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 120 "$D/bench_grid" --no-loop --graph --loss sum \
      --reps 1 --warmup 0 --phase forward --mode $c --shape $sh --variants $v 2>&1 \
      | grep -E "candle-cudnn-rnn:|^\| (Lstm|Gru) " | sed "s/^/$v $c $sh /"
  done > "$OUT/plans.txt"
  stamp "sanitizers"
  sanitize_bench "lstm:1,128,4,1024 gru:1,128,4,1024" op-bf16-default --phase forward
  ;;
ab)
  for graph in --graph ""; do
    for spec in $shapes; do
      split_spec "$spec"
      t() { PHASE=forward bench_with "$@"; }
      echo "${graph:-eager} $v $c $sh | rule $(t X=1) | off $(t CANDLE_RNN_PERSISTENT_WGMMA=0) | rule $(t X=1)"
    done
  done 2>&1 | tee -a "$OUT/ab.log"
  ;;
grid) bash "$here/../2026-11-30-h200-side-streams/run.sh" "$D" "$OUT" grid ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
