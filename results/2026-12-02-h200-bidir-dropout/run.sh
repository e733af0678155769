#!/usr/bin/env bash
# Inter-layer dropout in bidirectional stacks on the crate's kernels (branch `bidir-dropout`: each
# direction's output through a mask of its own, `persistent/masks.rs`'s `kernel_args` keyed by the
# unit; until now such a stack trained on cuDNN's `Standard`). Written 2026-12-02, not run yet:
# rename the folder to the day and GPU it runs on. From the repository root, with D (the branch's
# scripts/devbin.sh binaries) and OUT set; one command a part:
# - `tests`: the op's whole GPU suite in three parts side by side (OUT/tests-K.log; the dropout
#   tests, masks replayed from the seed and gradients against central differences, now with
#   bidirectional stacks on the kernels), `gpu_check --persistent` in f16 and bf16 (the side-by-side
#   directions' rows: not yet checked there), and compute-sanitizer memcheck, racecheck and
#   synccheck on a bidirectional training call with dx and dropout 0.5 (f16, `Persistent`):
#   LSTM [3, 8, 5, 64] and GRU [2, 16, 4, 46] (padded rows);
# - `speed`: graphed f16 training with dx, every layer bidirectional, dropout 0.3: ours
#   (`op-f16-persistent`) beside the default (now ours where the rules give it) and `Standard`
#   (`op-f16-standard`: main's default for these) at SHAPES, then PyTorch's fp16 module with the
#   same dropout (OUT/speed.txt, OUT/torch-graph.log); then ../2026-12-02-h200-bidir-check/next.sh
#   (OUT/trace.log).
#   D=... OUT=... results/2026-12-02-h200-bidir-dropout/run.sh tests
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
SHAPES=${SHAPES:-"lstm:2,32,30,128 gru:2,32,30,128 lstm:2,128,30,128 lstm:3,32,30,512
  gru:3,128,30,512 lstm:2,20,35,1500"}
case $1 in
  tests)
    stamp tests
    (gpu_tests_part 1 3) &
    (gpu_tests_part 2 3) &
    (gpu_tests_part 3 3) &
    (gpu_check_half) &
    (for spec in lstm:3,8,5,64 gru:2,16,4,46; do
      sanitize_bench "$spec" op-f16-persistent --phase train --input-grad --bidirectional \
        --dropout 0.5
    done > /dev/null) &
    wait
    cat "$OUT/sanitize.log"
    stamp done
    ;;
  speed)
    stamp speed
    for spec in $SHAPES; do
      c=${spec%%:*} sh=${spec#*:}
      echo "$c $sh | $(API=direct bench_rows "--graph --bidirectional --dropout 0.3" $c $sh \
        op-f16-persistent,op-f16-default,op-f16-standard)"
    done | tee "$OUT/speed.txt"
    only=$(for spec in $SHAPES; do echo "--only ${spec/:/,}"; done)
    # shellcheck disable=SC2086
    timeout 200 python3 scripts/torch_reference.py --grid --graph --bidirectional --dropout 0.3 \
      --impls torch-fp16 --loss sum --input-grad --reps 10 --warmup 5 $only \
      > "$OUT/torch-graph.log" 2>>"$OUT/stderr.txt"
    grep -iE "^\| (lstm|gru) " "$OUT/torch-graph.log"
    stamp trace
    results/2026-12-02-h200-bidir-check/next.sh
    stamp done
    ;;
esac
