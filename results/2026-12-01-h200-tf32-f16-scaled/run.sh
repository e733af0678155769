#!/usr/bin/env bash
# On the GPU machine, f32 inference under TF32 math on the wgmma forward, its products' operands
# f16 scaled by powers of two (`Plan::f16_scaled`, recurrence_wgmma_fwd.cu's F16_SCALED,
# f16_scaled.cu), which `RnnAlgo::Persistent` takes at the wgmma forward's shapes (hidden 1024
# from batch 32, 512 from 64) while the default still gives them its TF32 rule's kernel. DIR
# built as `scripts/devbin.sh DIR` builds it:
#   1. (tests) the GPU tests of TF32 on the kernels (the new wgmma case among them) and of the
#      half wgmma forward (OUT/tests-*.log).
#   2. (sanitize) compute-sanitizer memcheck, racecheck and synccheck on an inference forward of
#      LSTM [1, 32, 2, 1024] (16-unit blocks) and GRU [1, 128, 2, 1024] (32-unit blocks, 4
#      groups), op-tf32-persistent (OUT/sanitize.log, OUT/sanitize.tgz).
#   3. (bench) graphed inference forwards, µs an example, op-tf32-default and op-tf32-persistent
#      in one bench_grid call / PyTorch's TF32 module (torch_reference.py --impls torch-tf32,
#      training and forward) / the op again, at the TF32 grid's shapes the path takes, LSTM and
#      GRU; then the op's eagerly (OUT/bench.log; PyTorch's rows in OUT/bench-torch*.log).
#   4. (rule) on the build with the TF32 rule's change (the default takes the path at those
#      shapes, stacks of up to 3): the TF32 tests again, then as `bench` the default against
#      cuDNN's `Standard` at shapes the grid lacks ([30, 64-96, 1024], [30, 32, 3 x 1024],
#      [30, 96, 2 x 1024]), into OUT/rule.log.
#   5. (grid) scripts/compare-grid.sh in TF32: the op's default against PyTorch's TF32 module
#      (OUT/grid.log, OUT/table.md, OUT/grid.tgz).
#   6. (check) `gpu_check --persistent --dtype tf32`, both cells: every TF32 row against the CPU
#      path in f64 and cuDNN's TF32 errors, the new inference rows at [*, 64-128, 1024] among
#      them (OUT/gpu_check.log).
#   results/2026-12-01-h200-tf32-f16-scaled/run.sh DIR OUT [tests|sanitize|bench|rule|grid|check]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-tests}
source scripts/on-gpu.sh
variants=op-tf32-default,op-tf32-persistent
shapes="1,32,30,1024 1,128,30,1024 3,128,30,1024 3,128,200,1024 1,64,30,512 1,128,30,512 3,128,30,512"
# on-gpu.sh's forward_rows of $variants at every cell and shape, graphed where $1 is --graph,
# each line led by $2.
all_rows() {
  local c sh
  for sh in $shapes; do
    for c in lstm gru; do echo "$2 $c $sh | $(forward_rows "$1" $c $sh "$variants")"; done
  done
}
for part in $parts; do
  case $part in
    tests)
      stamp "tests"
      gpu_tests_as tf32 persistent_tf32
      gpu_tests_as wgmma persistent_wgmma_forward
      ;;
    sanitize)
      stamp "sanitize"
      SAN_TIMEOUT=120 sanitize_bench "lstm:1,32,2,1024 gru:1,128,2,1024" op-tf32-persistent --phase forward
      ;;
    bench|rule)
      stamp "$part"
      log=bench
      if [ $part = rule ]; then
        gpu_tests_as tf32-rule persistent_tf32
        variants=op-tf32-default,op-tf32-standard log=rule
        shapes="1,64,30,1024 1,96,30,1024 3,32,30,1024 2,96,30,1024"
      fi
      {
        all_rows --graph "ours graphed"
        only=""
        for sh in $shapes; do for c in lstm gru; do only="$only --only $c,$sh"; done; done
        for graph in --graph ""; do
          timeout 200 python3 scripts/torch_reference.py --grid --impls torch-tf32 $graph --loss sum \
            --reps 10 --warmup 5 $only > "$OUT/$log-torch${graph:+-graph}.log" 2>>"$OUT/stderr.txt"
          grep -iE "^\| (lstm|gru) " "$OUT/$log-torch${graph:+-graph}.log" | sed "s/^/torch ${graph:-eager} /"
        done
        all_rows --graph "ours graphed again"
        all_rows "" "ours eager"
      } | tee "$OUT/$log.log"
      ;;
    grid)
      stamp "grid"
      compare_grid torch-tf32 op-tf32-default 450
      ;;
    check)
      stamp "check"
      gpu_check_persistent --dtype tf32
      grep -E 'H1024 tf32 inference' "$OUT/gpu_check.log"
      ;;
  esac
done
