#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old d57b739` (old-bench_grid: the
# backward that converted dy where it loaded it; bench_grid and the tests: dy converted where a
# step uses it, dy.diff):
#   tests:     the op's GPU tests (TESTS: a name filter, if any), then compute-sanitizer memcheck
#              and synccheck on the one-layer LSTM test with CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1
#              (its backward pushed in one cluster);
#   speed:     graphed training | forward, µs an example, through the op's direct API, old | new |
#              old | new, f16 and TF32 defaults, on the grid's shapes that the crate's kernels
#              take and two more;
#   speed2:    the same on one-cluster shapes, binaries of `scripts/devbin.sh DIR --old 3fc9756`
#              (old: the dy fix alone; new: the pushed backward's W_hh tiles in registers too);
#   ptb:       ptb-lm bench, large and medium in bf16 (stacks as wavefronts), old | new, twice;
#   gpu_check: gpu_check --persistent;
#   grid1, grid2, grid3: the grid beside PyTorch (results/2026-11-27-h100-grid/run.sh's parts).
#   results/2026-11-29-h200-one-block/run.sh DIR OUT tests|speed|speed2|ptb|gpu_check|grid1|grid2|grid3
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
export RNN_TEST_REQUIRE_GPU=1
# old | new | old | new on each shape of SHAPES in f16 (both cells), and on TF32_SHAPE in TF32.
old() { BENCH_GRID=$D/old-bench_grid bench_us "$@"; }
old_new() {
  stamp "old | new | old | new"
  for v in op-f16-default op-tf32-default; do
    for s in $1; do
      [ "$v" = op-tf32-default ] && [ "$s" != "$2" ] && continue
      for c in gru lstm; do
        echo "$v $c $s | $(old "" $c $s $v) | $(bench_us "" $c $s $v) | $(old "" $c $s $v) | $(bench_us "" $c $s $v)"
      done
    done
  done
}
case $PART in
tests)
  stamp "GPU tests ${TESTS:-all}"; gpu_tests $TESTS
  for tool in memcheck synccheck; do
    stamp "$tool"
    CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 timeout 200 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 persistent_lstm_one_layer \
      > "$OUT/$tool.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" "$OUT/$tool.log" | head -3
  done
  ;;
speed) old_new "1,32,30,128 1,128,30,128 1,32,30,512 1,32,30,1024 2,20,35,1500 1,32,200,128" 1,32,30,512 ;;
speed2) old_new "1,32,30,128 1,32,30,256 1,128,30,128 1,32,200,128" 1,32,30,128 ;;
ptb)
  b() { timeout 90 "$D/$2" bench --config "$3" --precision bf16 --batches 100 --warmup 20 --data data/ptb \
          --json "$OUT/ptb_$1.json" 2>&1 | grep -v '^{' | tail -n 1 | sed "s/^/$1: /"; }
  for c in large medium; do
    for i in 1 2; do b "${c}_old_$i" old-ptb-lm $c; b "${c}_new_$i" ptb-lm $c; done
  done
  ;;
gpu_check) stamp "gpu_check --persistent"; gpu_check_persistent ;;
grid*) bash results/2026-11-27-h100-grid/run.sh "$D" "$OUT" "$PART" ;;
esac
