#!/usr/bin/env bash
# Not run yet (written for the next session; this one's device time was spent): why cuDNN's
# `Standard` runs bidirectional layers at hidden 128 slower for us than for PyTorch (README §4).
# Build branch `cudnn-null-fill` (a full-length call gives cuDNN no padding fill, NULL as PyTorch
# does; its switches CANDLE_RNN_CUDNN_NULL_FILL=0 and CANDLE_RNN_CUDNN_BIDIR_ZEROS=1 give main's
# fill back and hand a bidirectional call given no state zeros, as PyTorch does, instead of NULL)
# with main beside it: `git checkout cudnn-null-fill && scripts/devbin.sh DIR --old main`,
# DIR/cupti holding `../2026-11-26-h200-graph-kernels/`'s CUPTI injection library and
# libcupti.so.13.xz (built and carried as there); `.devbin-l` in this checkout is that build, with
# cupti/ in it. Then, from main's checkout (the branch sits on it), with D=DIR and OUT set, one
# command a part:
# - `ab`: graphed f16 training with dx and the forward, bidirectional, µs an example: main's
#   build, then the branch's with the zero fill, with NULL, with NULL and zeros for the state,
#   with the zero fill and zeros; main's and NULL again; then the branch's with cuDNN's
#   persistent algorithms asked for (`choose.rs` gives them one direction only; a refusal prints
#   NaN), at hidden 128 and one row at 512 (OUT/ab.txt);
# - `trace`: every node of replayed graphed forwards of LSTM [30, 128, 128] x 2 directions, main's
#   build, the branch's and PyTorch's fp16 module (OUT/trace.log): which kernels differ;
# - `grid`: the bidirectional half grid on the branch's build (OUT/grid-bidir-half/), beside §4's;
# - `tests`: the branch's GPU tests of cuDNN calls (`cudnn` in their names: bidirectional ones,
#   lengths, dropout) against the f64 CPU path (OUT/tests-cudnn.log).
#   D=... OUT=... results/2026-12-02-h200-main-check/next.sh ab
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
source scripts/on-gpu.sh
how="--loss sum --input-grad --reps 10 --warmup 5 --bidirectional"
# "train forward; " (µs an example, on-gpu.sh's bench_with) of bench_grid $1 at CELL $2, SHAPE $3,
# bidirectional, graphed, variant $4 (op-f16-default unless given), with the settings in E
# (VAR=VALUE ..., none unless set).
bidir_row() {
  BENCH_GRID=$D/$1 BENCH_ARGS=--bidirectional graph=--graph v=${4:-op-f16-default} c=$2 sh=$3 \
    bench_with ${E:-X=1}
}
trace() {  # name, command...
  local name=$1; shift
  CUDA_INJECTION64_PATH=$bin/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv timeout 150 "$@" \
    > "$OUT/$name.log" 2>&1
  echo "### $name rc=$?"
  python3 "$here/../2026-11-26-h200-graph-kernels/analyze.py" "$OUT/$name.csv" 10
  rm -f "$OUT/$name.csv"
}
case $1 in
  ab)
    stamp ab
    for spec in lstm:1,32,30,128 lstm:1,128,30,128 gru:1,32,30,128 gru:1,128,30,128 lstm:1,128,30,512; do
      c=${spec%%:*} sh=${spec#*:}
      F=CANDLE_RNN_CUDNN_NULL_FILL Z=CANDLE_RNN_CUDNN_BIDIR_ZEROS
      echo "$c $sh | main $(bidir_row old-bench_grid $c $sh)" \
        "| fill $(E="$F=0" bidir_row bench_grid $c $sh)" \
        "| null $(bidir_row bench_grid $c $sh)" \
        "| null+zeros $(E="$Z=1" bidir_row bench_grid $c $sh)" \
        "| fill+zeros $(E="$F=0 $Z=1" bidir_row bench_grid $c $sh)" \
        "| main $(bidir_row old-bench_grid $c $sh) | null $(bidir_row bench_grid $c $sh)" \
        "| static $(bidir_row bench_grid $c $sh op-f16-static)" \
        "| small-h $(bidir_row bench_grid $c $sh op-f16-static-small-h)"
    done | tee "$OUT/ab.txt"
    ;;
  trace)
    stamp trace
    [ -f "$bin/cupti/libcupti.so.13" ] || xz -dk "$bin/cupti/libcupti.so.13.xz"
    {
      for b in old-bench_grid bench_grid; do
        trace "op_$b" "$D/$b" --no-loop --graph $how --api direct --phase forward --mode lstm \
          --shape 1,128,30,128 --variants op-f16-default
      done
      trace torch python3 scripts/torch_reference.py --grid --graph $how --only lstm,1,128,30,128 \
        --impls torch-fp16
    } > "$OUT/trace.log" 2>&1
    grep -E "^(###|graph)" "$OUT/trace.log"
    ;;
  tests) stamp tests; gpu_tests_as cudnn cudnn ;;
  grid)
    stamp "bidir half"
    export COMPARE_ARGS=--bidirectional
    OUT=$OUT/grid-bidir-half && mkdir -p "$OUT" && half_grid 300
    ;;
esac
