#!/usr/bin/env bash
# The next session's H200 commands, from main's tree with the builds carried (MAIN: main HEAD's
# scripts/devbin.sh build; BWD: the lab's backward probe, ../2026-11-30-h200-wgmma-backward-probe/):
#   a (about 7 minutes): the backward probe's checks, times, phases and sanitizers (LSTM and GRU;
#     OUT/probe/), then main's whole GPU suite (OUT/a/tests.log; the wgmma training forward's
#     default at [*, 128, 512] had run only through the knob and its own tests; up to 420 s);
#   b (about 6 minutes): graphed training with CANDLE_RNN_PERSISTENT_WGMMA=1 (ours: the wgmma
#     forward, the layer-by-layer backward) against the rule (cuDNN's `Standard`) at
#     [*, 128, 1024], 1 / rule / 1 (OUT/b/knob1024.log); the training forward's default at
#     [*, 128, 512] through `loss.backward()` (bench_grid --api plain), rule / off / rule
#     (OUT/b/plain512.log); then the half grid with the new default (OUT/b/table.md).
#   results/2026-11-30-h200-wgmma-train-forward/next.sh MAIN BWD OUT a|b
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
MAIN=$1 BWD=$2 OUT=$3 PART=$4
case $PART in
a)
  mkdir -p "$OUT/a" "$OUT/probe"
  bash results/2026-11-30-h200-wgmma-backward-probe/run.sh "$BWD" "$OUT/probe" probe | grep -E "^==|check|step"
  bash results/2026-11-30-h200-wgmma-backward-probe/run.sh "$BWD" "$OUT/probe" sanitize
  bash -c "D=$MAIN OUT=$OUT/a; source scripts/on-gpu.sh; stamp 'GPU tests'; TESTS_TIMEOUT=420 gpu_tests"
  ;;
b)
  bash -c "D=$MAIN OUT=$OUT/b; source scripts/on-gpu.sh
    graph=--graph
    for spec in op-bf16-default:lstm:1,128,30,1024 op-bf16-default:gru:1,128,30,1024 \
      op-bf16-default:lstm:3,128,30,1024 op-bf16-default:gru:3,128,30,1024 \
      op-bf16-default:lstm:3,128,200,1024 op-bf16-default:gru:3,128,200,1024; do
      split_spec \$spec
      echo \"\$v \$c \$sh | 1 \$(bench_with CANDLE_RNN_PERSISTENT_WGMMA=1) | rule \$(bench_with X=1) | 1 \$(bench_with CANDLE_RNN_PERSISTENT_WGMMA=1)\"
    done 2>&1 | tee \$OUT/knob1024.log
    for spec in op-f16-default:lstm:3,128,30,512 op-f16-default:gru:1,128,30,512; do
      split_spec \$spec
      echo \"plain \$v \$c \$sh | rule \$(API=plain bench_with X=1) | off \$(API=plain bench_with CANDLE_RNN_PERSISTENT_WGMMA=0) | rule \$(API=plain bench_with X=1)\"
    done 2>&1 | tee \$OUT/plain512.log
    stamp 'half grid'; half_grid"
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
