#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old REV` (REV: the build before the
# rule, `rules.rs`'s reg_gates_units):
#   check: the forward-with-register-gates GPU test (its 2 x 128 at batch 128 takes the wider
#          blocks) with the plans shown (OUT/plans.log: units and blocks a forward); then
#          compute-sanitizer memcheck, racecheck and synccheck on bf16 training with the input's
#          gradient at LSTM and GRU [6, 128, 128] (OUT/sanitize.log).
#   ab:    graphed training | forward (µs an example), this build / REV's / this build, bf16 and
#          f16 at LSTM and GRU [30, 128, 128], bf16 at LSTM [200, 128, 128] and [30, 128, 64]; then
#          bf16 through `loss.backward()` and eagerly at [30, 128, 128]; first both builds' plans at
#          LSTM [30, 128, 128] (their forwards' units a block) (OUT/ab.log).
#   torch: LSTM and GRU [30, 128, 128], the bf16 default, PyTorch's fp16 module, the bf16 default,
#          graphed and eager (OUT/vs-torch.log).
#   results/2026-12-02-h200-cluster-sizes/run.sh DIR OUT check|ab|torch
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
case $PART in
check)
  CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 gpu_tests_as reg persistent_register_gates --nocapture
  grep -oE "hidden: [0-9]+, batch: [0-9]+|units: \[[0-9]+, [0-9]+\]|\bgroups: [0-9]+|reg_gates: [a-z]+" \
    "$OUT/tests-reg.log" | paste -d' ' - - - - | sort | uniq -c | tee "$OUT/plans.log"
  sanitize_bench "lstm:1,128,6,128 gru:1,128,6,128" op-bf16-persistent --phase train --input-grad
  ;;
ab)
  old=$D/old-bench_grid
  {
    # The plans of this build's and REV's at the first shape (their forward's units a block).
    for grid in "$D/bench_grid" "$old"; do
      CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 60 "$grid" --no-loop --graph --loss sum --input-grad --reps 1 \
        --warmup 0 --mode lstm --shape 1,128,30,128 --variants op-bf16-default 2>&1 >/dev/null \
        | grep -oE "train (true|false)|units: \[[0-9]+, [0-9]+\]|reg_gates: [a-z]+" | paste -d' ' - - - \
        | sed "s|^|$(basename "$grid"): |"
    done
    for spec in op-bf16-default:lstm:1,128,30,128 op-bf16-default:gru:1,128,30,128 \
      op-f16-default:lstm:1,128,30,128 op-f16-default:gru:1,128,30,128 \
      op-bf16-default:lstm:1,128,200,128 op-bf16-default:lstm:1,128,30,64; do
      split_spec "$spec"
      graph=--graph
      echo "$spec | $(bench_with X=1) | old $(BENCH_GRID=$old bench_with X=1) | $(bench_with X=1)"
    done
    v=op-bf16-default
    for c in lstm gru; do
      sh=1,128,30,128 graph=--graph
      echo "plain $c $sh | $(API=plain bench_with X=1) | old $(API=plain BENCH_GRID=$old bench_with X=1) | $(API=plain bench_with X=1)"
      graph=""
      echo "eager $c $sh | $(bench_with X=1) | old $(BENCH_GRID=$old bench_with X=1) | $(bench_with X=1)"
    done
  } 2>&1 | tee "$OUT/ab.log"
  ;;
torch)
  specs="lstm:1,128,30,128 gru:1,128,30,128"
  v=op-bf16-default
  {
    for round in 1 2; do
      for spec in $specs; do
        c=${spec%%:*} sh=${spec#*:}
        graph=--graph; echo "ours graphed $c $sh | $(bench_with X=1)"
        graph=""; echo "ours eager $c $sh | $(bench_with X=1)"
      done
      [ $round = 1 ] && torch_rows torch "$(echo $specs | sed 's/:/,/g')"
    done
  } 2>&1 | tee "$OUT/vs-torch.log"
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
