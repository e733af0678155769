#!/usr/bin/env bash
# On the GPU machine, the grid's slowest shapes against PyTorch (3 x 1024 at batch 128: ours runs
# cuDNN's `Standard` in training and its own wgmma forward, 0.98x PyTorch's fp16 module;
# results/2026-11-30-h200-wgmma-backward/logs/grid-table.md), DIR built as scripts/devbin.sh
# builds it:
#   1. (profile) every kernel's device time of ten training calls with the input's gradient, ours
#      (bf16, the default) at LSTM and GRU [30, 128, 3 x 1024] and ours with the crate's own
#      kernels asked for (CANDLE_RNN_PERSISTENT_WGMMA=1, CANDLE_RNN_PERSISTENT_WGMMA_BWD=1),
#      under nsys (ncu's replay fails on the cooperative launches: LaunchFailed), then PyTorch's
#      AMP fp16 step under torch.profiler (its --profile takes no fp16 module) (OUT/profile.tgz);
#   2. (own, not run yet) training with the input's gradient, µs an example: the default / the
#      crate's wgmma kernels / the default / PyTorch's fp16 module, at [30 and 200, 128, 3 x 1024],
#      LSTM and GRU, graphed and eager (OUT/own.log, OUT/torch-*.log).
#   3. (overlap, not run yet; a build of the branch overlap-weight-grads) each layer's weight
#      gradients beside the next layer's backward recurrence on the crate's wgmma kernels
#      (CANDLE_RNN_PERSISTENT_OVERLAP_WEIGHTS=1): the wgmma test with the knobs (its
#      [3, 128, 3 x 1024] cases on both wgmma kernels, every gradient against f64;
#      OUT/tests-overlap.log), compute-sanitizer on a training call at [4, 128, 3 x 1024]
#      (OUT/sanitize.log), then training with the input's gradient, µs an example: the crate's
#      kernels / with the overlap / the default / the crate's kernels / with the overlap, graphed
#      and eager (OUT/overlap.log).
#      (Ran from the branch's build and copy of this script; main has no such knob.)
#   4. (stacks; main from f37cf20, where training at [*, 128, L x 1024] plans both wgmma kernels)
#      the wgmma GPU test (its [2, 128, 3 x 1024] cases on both wgmma kernels, every gradient
#      against f64) and the rules' test (eager training of 3 x 1024 on ours), OUT/tests-*.log;
#      then training with the input's gradient, µs an example, at [30, 128, 2 x 1024],
#      [30 and 200, 128, 3 x 1024], LSTM and GRU: eagerly the default (now both wgmma kernels) /
#      the layer-by-layer kernels as before (CANDLE_RNN_PERSISTENT_WGMMA=0,
#      CANDLE_RNN_PERSISTENT_WGMMA_BWD=0) / the default, through the direct call and through
#      loss.backward(); graphed the default (cuDNN's `Standard` still); then PyTorch's fp16 module
#      eager and graphed at those shapes (OUT/stacks.log, OUT/torch-stacks*.log).
#   5. (more-stacks; main's build from f37cf20) training with the input's gradient, µs an example,
#      the default against the crate's kernels asked for (`op-bf16-persistent`: both wgmma kernels
#      at batch 128) at [30 and 200, 128, 2 x 1024] and [30 and 200, 128, 4 x 1024], LSTM and GRU,
#      graphed and eager, each row with the kernel that served (OUT/more-stacks.log): where the
#      rules' bounds (two layers graphed, four eagerly) stand now.
#   6. (rule-4; a build with the eager rule up to 4 x 1024) the rules' GPU test (eager 4 x 1024
#      on ours, graphed on `Standard`; OUT/tests-rules.log), then more-stacks again.
#   7. (suite, gpu-check; not run yet: a build of main after 81e1cb5) the whole GPU suite
#      (OUT/tests.log; about 220-330 s) and `gpu_check --persistent` with its rows at
#      [6, 128, 3 x 1024] and [5, 7, 4 x 64] (OUT/gpu_check.log; about 400 s): one command each.
#   results/2026-12-01-h200-stack-1024-profile/run.sh DIR OUT [profile|own|overlap|stacks|more-stacks|rule-4|suite|gpu-check]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-profile}
source scripts/on-gpu.sh
own="CANDLE_RNN_PERSISTENT_WGMMA=1 CANDLE_RNN_PERSISTENT_WGMMA_BWD=1"
# A line "GRAPH CELL SHAPE | what the function $2 prints" at each of graphed and eager, LSTM and
# GRU and the shapes $1 (the function reads `graph`, `c` and `sh`, as bench_with does).
each_call() {
  for graph in --graph ""; do
    for c in lstm gru; do
      for sh in $1; do
        echo "${graph:-eager} $c $sh | $($2)"
      done
    done
  done
}
for part in $parts; do
  case $part in
    profile)
      stamp "profile"
      # (The lent machine has no Nsight Systems of its own: the nsys inside Nsight Compute's folder,
      # which this finds there, wrote .qdstrm files it could not import; see README.md.)
      nsys_bin=$(command -v nsys || ls /opt/nvidia/nsight-systems*/*/bin/nsys /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -n 1)
      for c in lstm gru; do
        for how in default own; do
          stamp "$c $how"
          env_how=X=1
          [ $how = own ] && env_how=$own
          # Five warm-up and ten timed training calls; each kernel's total and count.
          env $env_how timeout 150 "$nsys_bin" profile -t cuda -o "$OUT/nsys-$c-$how" --force-overwrite true \
            "$D/bench_grid" --no-loop --loss sum --input-grad --mode $c --shape 3,128,30,1024 \
            --variants op-bf16-default --warmup 5 --reps 10 --phase train > "$OUT/nsys-$c-$how.log" 2>&1
          echo "rc=$?"
          "$nsys_bin" stats --report cuda_gpu_kern_sum --format csv -o "$OUT/kern-$c-$how" "$OUT/nsys-$c-$how.nsys-rep" \
            >> "$OUT/nsys-$c-$how.log" 2>&1
          rm -f "$OUT/nsys-$c-$how.nsys-rep" "$OUT/nsys-$c-$how.sqlite"
        done
        timeout 120 python3 scripts/torch_reference.py --profile $c,3,128,30,1024 --impl torch-amp-fp16 \
          > "$OUT/torch-$c.md" 2>&1
        echo "torch rc=$?"
      done
      (cd "$OUT" && tar czf profile.tgz nsys-* kern-* torch-* && rm -f nsys-* kern-* torch-*)
      ;;
    own)
      stamp "own"
      v=op-bf16-default
      own_line() { echo "default $(bench_with X=1) | own $(bench_with $own) | default $(bench_with X=1)"; }
      each_call "3,128,30,1024 3,128,200,1024" own_line 2>&1 | tee "$OUT/own.log"
      torch_rows torch "lstm,3,128,30,1024 lstm,3,128,200,1024 gru,3,128,30,1024 gru,3,128,200,1024" 300
      ;;
    overlap)
      stamp "overlap"
      # (The knobs exported for the helpers, which are shell functions.)
      (export $own CANDLE_RNN_PERSISTENT_OVERLAP_WEIGHTS=1
       gpu_tests_as overlap persistent_wgmma --nocapture
       sanitize_bench "lstm:3,128,4,1024 gru:3,128,4,1024" op-bf16-default --phase train --input-grad)
      v=op-bf16-default
      overlap="$own CANDLE_RNN_PERSISTENT_OVERLAP_WEIGHTS=1"
      overlap_line() {
        echo "own $(bench_with $own) | overlap $(bench_with $overlap) | default $(bench_with X=1) | own $(bench_with $own) | overlap $(bench_with $overlap)"
      }
      each_call "3,128,30,1024 3,128,200,1024" overlap_line 2>&1 | tee "$OUT/overlap.log"
      ;;
    stacks)
      stamp "stacks"
      gpu_tests_as wgmma persistent_wgmma
      gpu_tests_as rules graphed_modules_replay
      before="CANDLE_RNN_PERSISTENT_WGMMA=0 CANDLE_RNN_PERSISTENT_WGMMA_BWD=0"
      shapes="2,128,30,1024 3,128,30,1024 3,128,200,1024"
      graph=""  # (bench_with's: eager)
      for c in lstm gru; do
        for sh in $shapes; do
          for api in direct plain; do
            echo "eager $api $c $sh | default $(API=$api bench_with X=1) | layer by layer $(API=$api bench_with $before) | default $(API=$api bench_with X=1)"
          done
          echo "graphed direct $c $sh | default $(bench_rows --graph $c $sh op-bf16-default)"
          echo "eager direct $c $sh | default $(bench_rows "" $c $sh op-bf16-default)"
        done
      done 2>&1 | tee "$OUT/stacks.log"
      torch_rows torch-stacks "$(for c in lstm gru; do for sh in $shapes; do echo $c,$sh; done; done)"
      ;;
    rule-4)
      stamp "rule-4"
      gpu_tests_as rules graphed_modules_replay
      ;;&
    suite)
      stamp "suite"
      gpu_tests
      ;;
    gpu-check)
      stamp "gpu-check"
      gpu_check_persistent
      ;;
    more-stacks | rule-4)
      stamp "more-stacks"
      stack_line() { bench_rows "$graph" $c $sh op-bf16-default,op-bf16-persistent; }
      each_call "2,128,30,1024 2,128,200,1024 4,128,30,1024 4,128,200,1024" stack_line 2>&1 \
        | tee "$OUT/more-stacks.log"
      ;;
  esac
done
stamp done
