#!/usr/bin/env bash
# On the GPU machine, bench_grid, gpu_check and op-gpu-tests as scripts/devbin.sh builds them in
# DIR (the bias gradient of batch groups added by `rnn_sum_bias_parts` after the backward kernel)
# and OLD's bench_grid (main before it):
#   ab:       graphed bf16 training and forward (on-gpu.sh's bench_us), µs an example, DIR / OLD /
#             DIR at AB_SHAPES (CELL:L,B,T,H ...; OUT/ab.log).
#   sanitize: compute-sanitizer memcheck, racecheck and synccheck over training in batch groups
#             at SAN_SPECS (CELL:L,B,T,H ...; default LSTM and GRU at [6, 16, 64], two groups of
#             8, and [6, 32, 128], four), bf16 on the crate's kernels (OUT/sanitize.log; the
#             tools' logs in OUT/sanitize.tgz).
#   tests:    the op's GPU tests (OUT/tests.log).
#   results/2026-11-30-h200-bias-parts/run.sh DIR OUT ab|sanitize|tests
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
case $PART in
ab)
  [ -x "$OLD/bench_grid" ] || xz -dkf "$OLD/bench_grid.xz"
  for spec in ${AB_SHAPES:-lstm:1,128,30,128 gru:1,128,30,128 lstm:1,32,30,128 gru:1,32,30,128 gru:1,128,30,512 lstm:1,32,30,512 lstm:3,128,30,512}; do
    c=${spec%%:*} sh=${spec#*:}
    us() { BENCH_GRID=$1 bench_us "" $c $sh op-bf16-default; }
    echo "$c $sh | new $(us "$D/bench_grid") | old $(us "$OLD/bench_grid") | new $(us "$D/bench_grid")"
  done 2>&1 | tee "$OUT/ab.log"
  ;;
sanitize)
  SAN_TIMEOUT=120 sanitize_bench "${SAN_SPECS:-lstm:1,16,6,64 gru:1,16,6,64 lstm:1,32,6,128 gru:1,32,6,128}" \
    op-bf16-persistent --phase train --input-grad
  ;;
tests) stamp "GPU tests"; gpu_tests ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
