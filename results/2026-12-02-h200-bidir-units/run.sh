#!/usr/bin/env bash
# Bidirectional layers on the crate's kernels (`persistent/units.rs`, branch bidir-units) on the
# GPU, from the repository root, with D (its scripts/devbin.sh binaries) and OUT set; one command
# a part:
# - `tests`: the op's GPU tests of bidirectional layers on the kernels (among them padded rows,
#   whose row kernels changed) into OUT/tests-bidir.log; with `all`, every `persistent` test
#   (OUT/tests-persistent.log);
# - `sanitize`: compute-sanitizer memcheck, racecheck and synccheck on one bidirectional training
#   call with dx and one forward on `RnnAlgo::Persistent` (f16): LSTM [3, 8, 5, 64] (the row
#   kernels' flips and placed columns between layers) and GRU [1, 16, 4, 46] (padded rows);
# - `quick`: graphed training with dx and forwards, bidirectional, at hidden 128 (batch 32 and 128)
#   and a few wider shapes: ours (`op-f16-persistent`) beside the default (`Standard`), µs an
#   example, then PyTorch's fp16 module at the same shapes (OUT/quick.txt, OUT/torch-quick.log);
# - `check`: gpu_check --persistent in f16 and bf16 (the bidirectional rows among them);
# - `grid`: the half grid with every layer bidirectional, ours (`op-f16-persistent`,
#   `op-bf16-persistent`; `Standard` where ours take no call) against PyTorch's fp16 module, through
#   the sink (OUT/grid-bidir/);
# - `tf32`: the same in TF32 (`op-tf32-persistent` against PyTorch's TF32 module,
#   OUT/grid-bidir-tf32/).
# Before each grid, every grid row of the variants runs once, 16 at a time (`warm`), so that
# their kernels are compiled (pad.cu changed, so every module's source did: the kernel cache holds
# none of them) before the timed passes, which compile one after the other.
#   D=... OUT=... results/2026-12-02-h200-bidir-units/run.sh tests
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
# One untimed bidirectional training call and forward of bench_grid's VARIANTS ($1) at every grid
# shape, LSTM and GRU, 16 processes at once; prints the seconds taken.
warm() {
  local start=$SECONDS
  for c in lstm gru; do
    for sh in 1,32,30,128 1,32,30,512 1,32,30,1024 1,128,30,128 1,128,30,512 1,128,30,1024 \
      3,128,30,512 3,128,30,1024 3,128,200,512 3,128,200,1024 2,20,35,1500; do
      echo "$c $sh"
    done
  done | xargs -P 16 -n 2 sh -c 'timeout 200 "$0" --no-loop --loss sum --input-grad --reps 1 \
    --warmup 0 --api direct --bidirectional --variants "$1" --mode "$2" --shape "$3" \
    > /dev/null 2>&1' "$D/bench_grid" "$1" 2>/dev/null
  stamp "warm $1: $((SECONDS - start)) s"
}
case $1 in
  tests)
    stamp tests
    case ${2:-} in
      all) gpu_tests_as persistent persistent ;;
      *) gpu_tests_as bidir persistent_bidirectional ;;
    esac
    ;;
  sanitize)
    stamp sanitize
    for phase in train forward; do
      sanitize_bench "lstm:3,8,5,64 gru:1,16,4,46" op-f16-persistent --phase $phase --input-grad \
        --bidirectional
    done
    ;;
  quick)
    stamp quick
    specs="lstm:1,32,30,128 gru:1,32,30,128 lstm:1,128,30,128 gru:1,128,30,128 lstm:1,32,30,512
      gru:1,128,30,512 lstm:3,128,30,512"
    for spec in $specs; do
      c=${spec%%:*} sh=${spec#*:}
      echo "$c $sh | $(bench_rows "--graph --bidirectional" $c $sh op-f16-persistent,op-f16-default)"
    done | tee "$OUT/quick.txt"
    only=$(for spec in $specs; do echo "--only ${spec/:/,}"; done)
    # shellcheck disable=SC2086
    timeout 200 python3 scripts/torch_reference.py --grid --graph --bidirectional --impls torch-fp16 \
      --loss sum --input-grad --reps 10 --warmup 5 $only > "$OUT/torch-quick.log" 2>&1
    grep -iE "^\| (lstm|gru) " "$OUT/torch-quick.log"
    ;;
  check) stamp check; gpu_check_half ;;
  grid)
    export COMPARE_ARGS=--bidirectional
    warm op-f16-persistent,op-bf16-persistent
    stamp "bidir half"; OUT=$OUT/grid-bidir && mkdir -p "$OUT"
    compare_grid torch-fp16 op-f16-persistent,op-bf16-persistent 400
    ;;
  tf32)
    export COMPARE_ARGS=--bidirectional
    warm op-tf32-persistent
    stamp "bidir tf32"; OUT=$OUT/grid-bidir-tf32 && mkdir -p "$OUT"
    compare_grid torch-tf32 op-tf32-persistent 300
    ;;
esac
