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
# - `stack`: why a 2-layer bidirectional stack at hidden 128 took 4-5x one layer's time in
#   `speed` (forwards too, which drop nothing): graphed f16 default, 1 and 2 layers, one and two
#   directions, side by side on and off, with and without dropout (OUT/stack.txt); then every
#   node of the 2-layer bidirectional forward and training call (OUT/stack-trace.log).
# - `groups`: the rule's groups (one: a stack at batch <= 32 is a wavefront, `rules.rs`'s
#   `shape_groups`) against batch groups of 8 (CANDLE_RNN_PERSISTENT_GROUPS), layer by layer, at
#   small stacks, one and two directions, graphed f16 default; then PyTorch's fp16 module there
#   (OUT/groups.txt, OUT/groups-torch.log).
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
  stack)
    export v=op-f16-default graph=--graph c=lstm
    for sh in 1,32,30,128 2,32,30,128 2,128,30,128; do
      for bi in "" --bidirectional; do
        for drop in "" "--dropout 0.3"; do
          echo "$sh ${bi:-one-way} ${drop:-no-dropout} | $(BENCH_ARGS="$bi $drop" bench_with X=1)" \
            "| one after the other $(BENCH_ARGS="$bi $drop" bench_with CANDLE_RNN_PERSISTENT_SIDE_BY_SIDE=0)"
        done
      done
    done | tee "$OUT/stack.txt"
    analyze=results/2026-11-26-h200-graph-kernels/analyze.py
    [ -f "$bin/cupti/libcupti.so.13" ] || xz -dk "$bin/cupti/libcupti.so.13.xz"
    for phase in forward train; do
      CUDA_INJECTION64_PATH=$bin/cupti/libtrace_kernels.so TRACE_OUT=$OUT/t.csv timeout 120 \
        "$D/bench_grid" --no-loop --graph --bidirectional --loss sum --input-grad --reps 20 \
        --warmup 5 --api direct --phase $phase --mode lstm --shape 2,32,30,128 \
        --variants op-f16-default > "$OUT/t.out" 2>&1
      echo "### $phase rc=$? $(grep -E '^\| (Lstm|Gru) ' "$OUT/t.out")"
      python3 "$analyze" "$OUT/t.csv" 10
    done > "$OUT/stack-trace.log" 2>&1
    rm -f "$OUT/t.csv" "$OUT/t.out"
    grep -E "^(###|graph)" "$OUT/stack-trace.log"
    ;;
  groups)
    GSPECS=${GSPECS:-"lstm:2,32,30,128 gru:2,32,30,128 lstm:3,32,30,128 lstm:2,16,30,128
      lstm:2,32,30,256 lstm:2,32,30,512 lstm:2,32,200,128"}
    export v=op-f16-default graph=--graph
    for bi in "" --bidirectional; do
      for spec in $GSPECS; do
        c=${spec%%:*} sh=${spec#*:}
        b=$(echo "$sh" | cut -d, -f2)
        echo "$c $sh ${bi:-one-way} | rule $(BENCH_ARGS=$bi bench_with X=1)" \
          "| 8 a group $(BENCH_ARGS=$bi bench_with CANDLE_RNN_PERSISTENT_GROUPS=$((b / 8)))" \
          "| 4 a group $(BENCH_ARGS=$bi bench_with CANDLE_RNN_PERSISTENT_GROUPS=$((b / 4)))" \
          "| rule $(BENCH_ARGS=$bi bench_with X=1)"
      done
    done | tee "$OUT/groups.txt"
    only=$(for spec in $GSPECS; do echo "--only ${spec/:/,}"; done)
    for bi in "" --bidirectional; do
      # shellcheck disable=SC2086
      timeout 200 python3 scripts/torch_reference.py --grid --graph $bi --impls torch-fp16 \
        --loss sum --input-grad --reps 10 --warmup 5 $only 2>>"$OUT/stderr.txt" \
        | grep -iE "^\| (lstm|gru) " | sed "s/^/${bi:-one-way} /"
    done | tee "$OUT/groups-torch.log"
    ;;
esac
