#!/usr/bin/env bash
# On the GPU machine, bench_grid, gpu_check and op-gpu-tests as scripts/devbin.sh builds them in
# DIR:
#   ab:        CANDLE_RNN_PERSISTENT_FORWARD_TRANSPOSES 1 / 0 / 1 (a pushed training forward
#              writes W_hh transposed for its backward itself, or a side stream does), graphed
#              then eager (eager at the first two shapes only), training | forward (µs an
#              example) at AB_SHAPES (VARIANT:CELL:L,B,T,H ...), and the first two graphed
#              through `loss.backward()` (--api plain) (OUT/ab.log); then each shape's plan
#              (OUT/plans.txt).
#   check:     the op's GPU tests and gpu_check --persistent LSTM and GRU, all three at once
#              (../2026-11-30-h200-fill-rows/run.sh's), with the forwards writing the transpose
#              wherever they can (CANDLE_RNN_PERSISTENT_FORWARD_TRANSPOSES=1).
#   sanitize:  memcheck, racecheck and synccheck on ours at SAN_SPECS (by default pushed
#              forwards that write the transpose: one group of 8 at hidden 512, and 4 groups)
#              (../2026-11-30-h200-bias-parts/run.sh's), likewise.
#   grid:      ../2026-11-30-h200-side-streams/run.sh's (GRID=half|tf32).
#   results/2026-11-30-h200-forward-transposes/run.sh DIR OUT ab|check|sanitize|grid
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
shapes=${AB_SHAPES:-"op-bf16-default:lstm:1,32,30,512 op-f16-default:gru:1,32,30,512
  op-f16-default:lstm:1,32,30,512 op-bf16-default:gru:1,32,30,512 op-bf16-default:lstm:1,8,30,512
  op-bf16-default:lstm:1,32,200,512 op-bf16-default:lstm:2,32,30,512 op-bf16-default:gru:1,16,30,256"}
case $PART in
ab)
  for graph in --graph ""; do
    n=0
    for spec in $shapes; do
      n=$((n + 1))
      [ -z "$graph" ] && [ $n -gt 2 ] && break
      split_spec "$spec"
      t() { bench_with CANDLE_RNN_PERSISTENT_FORWARD_TRANSPOSES=$1; }
      echo "${graph:-eager} $v $c $sh | W1 $(t 1) | W0 $(t 0) | W1 $(t 1)"
    done
  done 2>&1 | tee -a "$OUT/ab.log"
  # Through `loss.backward()` and an optimizer (bench_grid --api plain), graphed.
  graph=--graph
  for spec in $(echo $shapes | cut -d' ' -f1-2); do
    split_spec "$spec"
    t() { API=plain bench_with CANDLE_RNN_PERSISTENT_FORWARD_TRANSPOSES=$1; }
    echo "plain $v $c $sh | W1 $(t 1) | W0 $(t 0) | W1 $(t 1)"
  done 2>&1 | tee -a "$OUT/ab.log"
  for spec in $shapes; do
    split_spec "$spec"
    CANDLE_RNN_PERSISTENT_FORWARD_TRANSPOSES=1 CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 120 \
      "$D/bench_grid" --no-loop --graph --loss sum \
      --input-grad --reps 1 --warmup 0 --mode $c --shape $sh --variants $v 2>&1 \
      | grep "candle-cudnn-rnn:" | sed "s/^/$v $c $sh /"
  done > "$OUT/plans.txt"
  ;;
check)
  CANDLE_RNN_PERSISTENT_FORWARD_TRANSPOSES=1 bash "$here/../2026-11-30-h200-fill-rows/run.sh" \
    "$D" "$OUT" check ;;
sanitize)
  CANDLE_RNN_PERSISTENT_FORWARD_TRANSPOSES=1 SAN_SPECS=${SAN_SPECS:-"lstm:1,8,6,512 gru:1,8,6,512
    lstm:1,32,6,512"} bash "$here/../2026-11-30-h200-bias-parts/run.sh" "$D" "$OUT" sanitize ;;
grid) bash "$here/../2026-11-30-h200-side-streams/run.sh" "$D" "$OUT" grid ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
