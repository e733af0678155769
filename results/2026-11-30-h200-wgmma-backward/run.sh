#!/usr/bin/env bash
# On the GPU machine, the library's wgmma backward (recurrence_wgmma_bwd.cu; branch
# wgmma-backward, DIR built as scripts/devbin.sh builds it), asked for with
# CANDLE_RNN_PERSISTENT_WGMMA_BWD=1 (no rule takes it yet):
#   check:    with the knob, the wgmma GPU test (training at [5, 128, 1024] on it: every
#             gradient against f64) and the persistent dropout gradients test (its GRU
#             [3, 128, 2 x 1024] case); the wgmma test again with the partial sums in bf16
#             (CANDLE_RNN_PERSISTENT_WGMMA_BWD_BF16=1: its errors beside the f32 sums'); then
#             the dropout test without the knob (OUT/tests-*.log). (The kernel takes hidden 1024
#             at batch 128 alone; of the other tests only the captured one has such a shape, a
#             stack the knob takes from `Standard`, against its rule's name; `ab` replays the
#             kernel from CUDA graphs.)
#   sanitize: memcheck, racecheck and synccheck on training calls at [4, 128, 1024] with the
#             knob, LSTM and GRU (OUT/sanitize.log); LSTM with the partial sums in bf16
#             (OUT/bf16/sanitize.log);
#   ab:       graphed training (with the input's gradient) and the forward, µs an example:
#             both wgmma knobs / the forward's alone / both / both with W_hh transposed for the
#             backward (CANDLE_RNN_PERSISTENT_TRANSPOSED=1: A's fill in 4-byte loads) / both with
#             the partial sums in bf16, then the rule, at [30, 128, 1024] (bf16 and f16),
#             [200, 128, 1024] and [30, 128, 3 x 1024], LSTM and GRU (OUT/ab.log).
#   rule:     with the rule, the GPU suite and rule / off / rule (see below);
#   grid:     the half grid against PyTorch's fp16 module (OUT/table.md, OUT/grid.tgz);
#   profile:  kernel by kernel (Nsight Compute; failed: LaunchFailed under its replay).
#   results/2026-11-30-h200-wgmma-backward/run.sh DIR OUT check|sanitize|ab|rule|grid|profile
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
case $PART in
check)
  stamp "knob: wgmma, dropout"
  CANDLE_RNN_PERSISTENT_WGMMA_BWD=1 CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 gpu_tests_as knob persistent_wgmma \
    dropout_gradients_use_the_forward_masks_on_the_persistent --nocapture
  stamp "knob, bf16 partial sums: wgmma"
  CANDLE_RNN_PERSISTENT_WGMMA_BWD=1 CANDLE_RNN_PERSISTENT_WGMMA_BWD_BF16=1 gpu_tests_as knob-bf16 persistent_wgmma \
    --nocapture
  stamp "rule: dropout"
  gpu_tests_as rule dropout_gradients_use_the_forward_masks_on_the_persistent
  stamp done
  ;;
sanitize)
  CANDLE_RNN_PERSISTENT_WGMMA_BWD=1 sanitize_bench "lstm:1,128,4,1024 gru:1,128,4,1024" \
    op-bf16-default --phase train --input-grad
  # The partial sums in bf16 (OUT/bf16/).
  (OUT=$OUT/bf16; mkdir -p "$OUT"
   CANDLE_RNN_PERSISTENT_WGMMA_BWD=1 CANDLE_RNN_PERSISTENT_WGMMA_BWD_BF16=1 \
     sanitize_bench "lstm:1,128,4,1024" op-bf16-default --phase train --input-grad)
  ;;
ab)
  graph=--graph
  for spec in op-bf16-default:lstm:1,128,30,1024 op-bf16-default:gru:1,128,30,1024 \
    op-bf16-default:lstm:3,128,30,1024 op-bf16-default:gru:3,128,30,1024 \
    op-f16-default:lstm:1,128,30,1024 op-bf16-default:lstm:1,128,200,1024; do
    split_spec "$spec"
    both="CANDLE_RNN_PERSISTENT_WGMMA=1 CANDLE_RNN_PERSISTENT_WGMMA_BWD=1"
    echo "$v $c $sh | both $(bench_with $both) | fwd $(bench_with CANDLE_RNN_PERSISTENT_WGMMA=1) | both $(bench_with $both) | both, W_hh transposed $(bench_with $both CANDLE_RNN_PERSISTENT_TRANSPOSED=1) | both, bf16 sums $(bench_with $both CANDLE_RNN_PERSISTENT_WGMMA_BWD_BF16=1) | rule $(bench_with X=1)"
  done 2>&1 | tee "$OUT/ab.log"
  ;;
rule)
  # With the rule (one layer of 1024 at batch 128 on the wgmma backward): the whole GPU suite,
  # then graphed, eager and `loss.backward()` training, rule / without the wgmma backward / rule
  # (OUT/rule.log).
  stamp "GPU suite"
  gpu_tests
  for spec in op-bf16-default:lstm:1,128,30,1024 op-bf16-default:gru:1,128,30,1024 \
    op-f16-default:lstm:1,128,30,1024 op-f16-default:gru:1,128,30,1024; do
    split_spec "$spec"
    for graph in --graph ""; do
      echo "$v $c $sh ${graph:-eager} | rule $(bench_with X=1) | off $(bench_with CANDLE_RNN_PERSISTENT_WGMMA_BWD=0) | rule $(bench_with X=1) | plain: rule $(API=plain bench_with X=1) | off $(API=plain bench_with CANDLE_RNN_PERSISTENT_WGMMA_BWD=0)"
    done
  done 2>&1 | tee "$OUT/rule.log"
  stamp done
  ;;
grid)
  half_grid
  ;;
profile)
  # Where a training call's time goes, kernel by kernel (Nsight Compute's gpu__time_duration of
  # the kernels of 1 warm-up and 2 eager training calls, application replay), both knobs and the
  # forward's alone, at [30, 128, 1024] bf16 (OUT/ncu.tgz).
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
  for c in lstm gru; do
    for knobs in "CANDLE_RNN_PERSISTENT_WGMMA_BWD=1" "X=1"; do
      name=$c-${knobs%%=*}
      env CANDLE_RNN_PERSISTENT_WGMMA=1 $knobs timeout 150 "$ncu" --replay-mode application \
        --clock-control none --metrics gpu__time_duration.sum --csv "$bin/bench_grid" --no-loop \
        --loss sum --input-grad --warmup 1 --reps 2 --api direct --mode $c --shape 1,128,30,1024 \
        --variants op-bf16-default > "$OUT/$name.csv" 2> "$OUT/$name.log"
      echo "$name rc=$?"
    done
  done
  (cd "$OUT" && tar czf ncu.tgz *.csv *.log && rm -f *.csv *.log)
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
