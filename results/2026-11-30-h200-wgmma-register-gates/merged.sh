#!/usr/bin/env bash
# On the GPU machine, main after the merge (DIR, built as scripts/devbin.sh builds it):
#   tests:  the op's whole GPU suite (OUT/tests.log), then `gpu_check --persistent`
#           (OUT/gpu_check.log).
#   grid:   the half grid (../2026-11-30-h200-wgmma-forward/run.sh's), then the wgmma forward
#           wherever it fits (CANDLE_RNN_PERSISTENT_WGMMA=1) against the rule, graphed forwards at
#           hidden 512 and batch 64-128 (OUT/knob.log): the knob's last run (before the merge)
#           found it 0.99-1.07x there.
#   rule512: with the rule extended to hidden 512 at batch 128 (d1e4bae): the wgmma GPU test
#           (OUT/tests.log), compute-sanitizer memcheck, racecheck and synccheck on an inference
#           forward at [4, 128, 512], LSTM and GRU (OUT/sanitize.log), then the half grid.
#   results/2026-11-30-h200-wgmma-register-gates/merged.sh DIR OUT tests|grid|rule512
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
case $PART in
tests)
  stamp "GPU tests"; gpu_tests
  stamp "gpu_check --persistent"; gpu_check_persistent
  stamp done
  ;;
grid)
  stamp "half grid"; half_grid
  stamp "knob"
  graph=--graph
  for spec in op-bf16-default:lstm:1,128,30,512 op-f16-default:gru:1,128,30,512 \
    op-bf16-default:lstm:1,64,30,512 op-bf16-default:gru:1,128,200,512 \
    op-bf16-default:lstm:3,128,30,512 op-f16-default:gru:3,128,200,512; do
    split_spec "$spec"
    t() { PHASE=forward bench_with "$@"; }
    echo "$v $c $sh | on $(t CANDLE_RNN_PERSISTENT_WGMMA=1) | rule $(t X=1) | on $(t CANDLE_RNN_PERSISTENT_WGMMA=1)"
  done 2>&1 | tee "$OUT/knob.log"
  stamp done
  ;;
rule512)
  stamp "GPU tests (wgmma)"; gpu_tests persistent_wgmma
  stamp "sanitizers"
  sanitize_bench "lstm:1,128,4,512 gru:1,128,4,512" op-bf16-default --phase forward
  stamp "half grid"; half_grid
  stamp done
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
