#!/usr/bin/env bash
# On the GPU machine, the wgmma training forward (branch wgmma-train-forward; DIR built as
# scripts/devbin.sh builds it):
#   check:  the wgmma GPU test by default and with CANDLE_RNN_PERSISTENT_WGMMA=1 (its training
#           cases then take the wgmma forward), then with the knob the persistent dropout
#           gradients, batch groups, stacks and GRU tests (OUT/tests-*.log).
#   ab:     graphed training (with the input's gradient) and the forward, µs an example, knob 1 /
#           rule / 1 at [*, 128, *512] and [30, 128, 1024] (OUT/ab.log).
#   sanitize: memcheck, racecheck and synccheck on a training call at [4, 128, 512] with the knob,
#           LSTM and GRU (OUT/sanitize.log).
#   results/2026-11-30-h200-wgmma-train-forward/run.sh DIR OUT check|ab|sanitize
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
tests() {  # NAME FILTER... (with the environment given before the call)
  local name=$1; shift
  RNN_TEST_REQUIRE_GPU=1 timeout 240 "$D/op-gpu-tests" --test-threads=1 "$@" > "$OUT/tests-$name.log" 2>&1
  echo "$name rc=$? $(grep -E '^test result' "$OUT/tests-$name.log")"
  grep -E "FAILED|panicked|failed:" "$OUT/tests-$name.log" | head -5
}
case $PART in
check)
  stamp "wgmma test, rule"; tests wgmma-rule persistent_wgmma
  stamp "wgmma test, knob"; CANDLE_RNN_PERSISTENT_WGMMA=1 tests wgmma-knob persistent_wgmma
  stamp "knob: dropout, groups, stacks, GRU"
  CANDLE_RNN_PERSISTENT_WGMMA=1 tests knob-others dropout_gradients_use_the_forward_masks_on_the_persistent \
    persistent_batch_groups persistent_lstm_stacks persistent_gru
  stamp done
  ;;
ab)
  graph=--graph
  for spec in op-f16-default:lstm:1,128,30,512 op-f16-default:gru:1,128,30,512 \
    op-f16-default:lstm:3,128,30,512 op-f16-default:gru:3,128,30,512 \
    op-f16-default:lstm:3,128,200,512 op-bf16-default:gru:3,128,200,512 \
    op-bf16-default:gru:1,128,30,1024; do
    split_spec "$spec"
    echo "$v $c $sh | 1 $(bench_with CANDLE_RNN_PERSISTENT_WGMMA=1) | rule $(bench_with X=1) | 1 $(bench_with CANDLE_RNN_PERSISTENT_WGMMA=1)"
  done 2>&1 | tee "$OUT/ab.log"
  ;;
sanitize)
  CANDLE_RNN_PERSISTENT_WGMMA=1 sanitize_bench "lstm:1,128,4,512 gru:1,128,4,512" op-bf16-default --phase train --input-grad
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
