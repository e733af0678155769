#!/usr/bin/env bash
# On the GPU machine, f32 inference under TF32 math on the layer-by-layer and one-cluster
# forwards (recurrence_fwd.cu) as scaled f16 operands too (`Plan::scaled`), as the wgmma forward
# took them (../2026-12-01-h200-tf32-f16-scaled/). DIR built as `scripts/devbin.sh DIR` builds it:
#   1. (tests) the GPU tests of TF32 on the kernels and of dropout (OUT/tests-*.log).
#   2. (check) `gpu_check --persistent --dtype tf32`, both cells (OUT/gpu_check.log).
#   3. (bench) graphed inference forwards, µs an example, at the TF32 grid's shapes off the wgmma
#      forward and a few more: op-tf32-default and op-tf32-persistent in one bench_grid call,
#      with CANDLE_RNN_PERSISTENT_F16_SCALED=0 (TF32 products, as before) then unset (scaled
#      f16), then PyTorch's TF32 module, then ours again (OUT/bench.log; PyTorch's in
#      OUT/bench-torch*.log).
#   4. (grid) scripts/compare-grid.sh in TF32 (OUT/grid.log, OUT/table.md, OUT/grid.tgz).
#   5. (sanitize) compute-sanitizer memcheck, racecheck and synccheck on an inference forward,
#      op-tf32-persistent: LSTM [3, 8, 512] (64 blocks, the barrier in memory), GRU [3, 16, 128]
#      (4 groups, one cluster each, h pushed) and LSTM [3, 32, 200] (OUT/sanitize.log).
#   6. (fit) on the build whose scaled plans take the f16 layout's shared memory and whose TF32
#      rule gives ours such stacks' inference up to hidden 1500 at batch 32: the TF32 tests, then
#      graphed forwards of op-tf32-default (now ours), op-tf32-standard and op-tf32-persistent at
#      PTB large's [35, 20, 2 x 1500] and a few more / PyTorch's TF32 module / ours again
#      (OUT/fit.log, OUT/fit-torch-graph.log), then `gpu_check --persistent --dtype tf32` (its
#      PTB large rows now infer; OUT/gpu_check.log).
#   results/2026-12-01-h200-tf32-f16-scaled-layers/run.sh DIR OUT [tests|check|bench|grid|sanitize|fit]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-tests}
source scripts/on-gpu.sh
variants=op-tf32-default,op-tf32-persistent
shapes="1,32,30,128 1,128,30,128 1,32,30,512 1,8,30,512 2,20,35,650 2,20,35,1500"
# on-gpu.sh's forward_rows of $variants, graphed, at CELL $1 and SHAPE $2, with the setting $3
# (VAR=VALUE; X=1 for none).
graphed_rows() { (export "$3"; forward_rows --graph "$1" "$2" "$variants"); }
# Each cell and shape: TF32 products / scaled f16, each line led by $1.
all_rows() {
  local c sh
  for sh in $shapes; do
    for c in lstm gru; do
      echo "$1 $c $sh | tf32 | $(graphed_rows $c $sh CANDLE_RNN_PERSISTENT_F16_SCALED=0) scaled | $(graphed_rows $c $sh X=1)"
    done
  done
}
for part in $parts; do
  case $part in
    tests)
      stamp "tests"
      gpu_tests_as tf32 persistent_tf32
      gpu_tests_as dropout dropout
      ;;
    check)
      stamp "check"
      gpu_check_persistent --dtype tf32
      ;;
    bench)
      stamp "bench"
      {
        all_rows "ours"
        only=""
        for sh in $shapes; do for c in lstm gru; do only="$only --only $c,$sh"; done; done
        timeout 200 python3 scripts/torch_reference.py --grid --impls torch-tf32 --graph --loss sum \
          --reps 10 --warmup 5 $only > "$OUT/bench-torch-graph.log" 2>>"$OUT/stderr.txt"
        grep -iE "^\| (lstm|gru) " "$OUT/bench-torch-graph.log" | sed "s/^/torch --graph /"
        all_rows "ours again"
      } | tee "$OUT/bench.log"
      ;;
    grid)
      stamp "grid"
      compare_grid torch-tf32 op-tf32-default 450
      ;;
    fit)
      stamp "fit"
      gpu_tests_as tf32-fit persistent_tf32
      variants=op-tf32-default,op-tf32-standard,op-tf32-persistent
      shapes="2,20,35,1500 1,20,35,1500 2,20,35,1024 3,8,30,1024"
      {
        for sh in $shapes; do for c in lstm gru; do echo "ours $c $sh | $(graphed_rows $c $sh X=1)"; done; done
        only=""
        for sh in $shapes; do for c in lstm gru; do only="$only --only $c,$sh"; done; done
        timeout 200 python3 scripts/torch_reference.py --grid --impls torch-tf32 --graph --loss sum \
          --reps 10 --warmup 5 $only > "$OUT/fit-torch-graph.log" 2>>"$OUT/stderr.txt"
        grep -iE "^\| (lstm|gru) " "$OUT/fit-torch-graph.log" | sed "s/^/torch --graph /"
        for sh in $shapes; do for c in lstm gru; do echo "ours again $c $sh | $(graphed_rows $c $sh X=1)"; done; done
      } | tee "$OUT/fit.log"
      timeout 300 "$D/gpu_check" --persistent --dtype tf32 --seed 2711 > "$OUT/gpu_check.log" 2>&1
      echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"
      grep -E '\| FAIL \|' "$OUT/gpu_check.log" | head
      grep -E 'H1500 tf32 inference' "$OUT/gpu_check.log"
      ;;
    sanitize)
      stamp "sanitize"
      SAN_TIMEOUT=90 sanitize_bench "lstm:1,8,3,512 gru:1,16,3,128 lstm:1,32,3,200" op-tf32-persistent \
        --phase forward
      ;;
  esac
done
