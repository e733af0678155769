#!/usr/bin/env bash
# On the GPU machine, for what was branch tf32-cluster16-training (run 2026-12-01, logs in logs/):
# TF32 training plans of a small step (group batch x hidden up to 2048) at batches up to 32 take
# half precision's one-cluster sizes (clusters of 16 blocks first) instead of TF32's (8 only):
# `kernel.rs`'s `one_cluster_operands`. Last session's probe forced clusters of 16 at [30, 32, 128]:
# 0.88x (LSTM) and 0.93x (GRU) the time in graphed training
# (`results/2026-12-01-h200-tf32-scaled-rules/logs/last/probe.log`). DIR is the branch's build, MAIN
# main's (`scripts/devbin.sh DIR`):
#   1. (tests) the GPU tests of TF32 (OUT/tests-tf32.log), among them [6, 32, 128] on the
#      default, and [5, 3, 66] and [6, 16, 128], whose training plans change too.
#   2. (check) `gpu_check --persistent --dtype tf32` (OUT/gpu_check.log).
#   3. (sanitize) compute-sanitizer memcheck, racecheck and synccheck on TF32 training with the
#      input's gradient at [3, 32, 128] and [3, 8, 256], clusters of 16 (OUT/sanitize.log).
#   4. (bench) graphed TF32 training with the input's gradient, µs an example, main / branch /
#      main / branch, the default, at [30, 8-32, 64-256] and [200, 32, 128] (OUT/bench.log, the
#      branch's plans in OUT/plans.txt).
#   results/2026-12-01-h200-tf32-cluster16-training/run.sh DIR MAIN OUT [tests|check|sanitize|bench]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 MAIN=$2 OUT=$3
shift 3
parts=${*:-tests}
source scripts/on-gpu.sh
for f in "$MAIN"/*.xz; do [ -e "$f" ] || continue; [ -x "${f%.xz}" ] || { xz -dkf -T8 "$f"; chmod +x "${f%.xz}"; }; done
main_bench=$(cd "$MAIN" && pwd)/bench_grid
for part in $parts; do
  case $part in
    tests)
      stamp "tests"
      gpu_tests_as tf32 persistent_tf32
      ;;
    check)
      stamp "check"
      gpu_check_persistent --dtype tf32
      ;;
    sanitize)
      stamp "sanitize"
      SAN_TIMEOUT=${SAN_TIMEOUT:-90} sanitize_bench "lstm:1,32,3,128 gru:1,8,3,256" op-tf32-persistent --input-grad
      ;;
    bench)
      stamp "bench"
      graph=--graph v=op-tf32-default
      for sh in 1,32,30,128 1,16,30,128 1,8,30,128 1,32,30,64 1,32,30,256 1,16,30,256 1,32,200,128; do
        for c in lstm gru; do
          CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 60 "$D/bench_grid" --no-loop --loss sum --input-grad \
            --reps 1 --warmup 0 --mode $c --shape $sh --variants $v > /dev/null 2>> "$OUT/plans.txt"
          echo "$c $sh | main $(BENCH_GRID=$main_bench bench_with X=1) | branch $(bench_with X=1)" \
            "| main $(BENCH_GRID=$main_bench bench_with X=1) | branch $(bench_with X=1)"
        done
      done | tee "$OUT/bench.log"
      ;;
  esac
done
