#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh (or its bench_grid, gpu_check and
# op-gpu-tests alone) in DIR, with DIR/wp-* built by `scripts/persistent-lab/wgmma_probe.sh build`
# (README.md says how):
#   probe:  wgmma_probe's variants (OUT/probe.log; scripts/persistent-lab/wgmma_probe.sh run).
#   eager:  hidden 1024 at batch 128 (one and three layers, seq 30 and 200) and [30, 256, 3 x 128],
#           eager training | forward (µs an example): ours (bf16 and f16 `Persistent`) against
#           bf16 `Standard`, ours first and last (OUT/eager.log); graphed once (OUT/graphed.log).
#   stacks: stacks at batch 256 (2-4 layers, hidden 128-512) and at hidden 1024 (2 x 1024 at batch
#           128, 3 x 1024 at 64), graphed then eager, training | forward: ours (bf16 and f16
#           `Persistent`) against bf16 `Standard` and the f16 default (OUT/stacks.log).
#   rules:  after the rules that follow `eager` and `stacks`: the GPU test of the default's rules,
#           then the default (bf16 and f16) against bf16 `Standard` through `loss.backward()`
#           (--api plain) on the shapes they move, graphed then eager (OUT/rules.log).
#   grid:   scripts/compare-grid.sh in half precision (the op's bf16 and f16 defaults against
#           PyTorch's fp16 module, all six passes), as in ../2026-11-29-h200-refill-batch256/.
#   wide:   one layer past batch 128 (last session's rule), eager then graphed, training | forward:
#           the bf16 and f16 defaults against bf16 `Standard` and f16 `PersistStaticSmallH`
#           (OUT/wide.log).
#   (after `wide`, the rule that gives f16 `PersistStaticSmallH` that inference at hidden 128: the
#   GPU test of the default's rules, then `bench_rows` of the f16 and bf16 defaults at [30, 256,
#   128] and [200, 200, 128], graphed then eager: OUT/wide-rule.log, one command.)
#   (after that, the rule that gives ours f16 GRU stacks' training there: the same GPU test, then
#   the f16 default against `PersistStaticSmallH` on GRU [30, 256, 2 x 128] and [200, 256,
#   3 x 128]: OUT/gru-stack-rule.log, one command.)
#   profile: ncu's device time per kernel (gpu__time_duration.sum) of a training call (1 warm-up,
#           2 timed, bf16, --api direct): LSTM [30, 128, 3 x 512] and [30, 128, 512] on the
#           default (ours), [30, 128, 3 x 512] on `Standard` (OUT/ncu.tgz).
#   check:  gpu_check --persistent --mode gru (OUT/gpu_check.log).
#   tests:  all of the op's GPU tests (OUT/tests.log).
#   results/2026-11-29-h200-wgmma-eager1024/run.sh DIR OUT probe|eager|stacks|rules|grid|wide|profile|check|tests
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
case $PART in
probe)
  bash scripts/persistent-lab/wgmma_probe.sh run "$D" "${4:-.*}" > "$OUT/probe.log" 2>&1
  grep -E "^==|a step|MISMATCH|not all" "$OUT/probe.log"
  ;;
eager)
  for g in eager --graph; do
    log=$OUT/eager.log; [ $g = --graph ] && log=$OUT/graphed.log
    [ $g = eager ] && g=""
    for c in lstm gru; do
      for s in 1,128,30,1024 3,128,30,1024 1,128,200,1024 3,128,200,1024 3,256,30,128; do
        echo "${g:-eager} $c $s | $(bench_rows "$g" $c $s op-bf16-persistent,op-f16-persistent,op-bf16-standard,op-bf16-default)$(bench_rows "$g" $c $s op-bf16-persistent)"
      done
    done 2>&1 | tee "$log"
  done
  ;;
stacks)
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for c in lstm gru; do
      for s in 2,256,30,128 3,256,200,128 3,256,30,256 4,256,30,256 2,256,30,512 3,256,30,512 2,128,30,1024 3,64,30,1024; do
        echo "${g:-eager} $c $s | $(bench_rows "$g" $c $s op-bf16-persistent,op-f16-persistent,op-bf16-standard,op-f16-default)$(bench_rows "$g" $c $s op-bf16-persistent)"
      done
    done
  done 2>&1 | tee "$OUT/stacks.log"
  ;;
rules)
  stamp "GPU test"; gpu_tests the_default_serves
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for c in lstm gru; do
      for s in 2,256,30,128 3,256,30,256 3,256,30,512 2,128,30,1024 3,128,30,1024 3,128,200,1024; do
        echo "${g:-eager} $c $s | $(API=plain bench_rows "$g" $c $s op-bf16-default,op-f16-default,op-bf16-standard)"
      done
    done
  done 2>&1 | tee "$OUT/rules.log"
  ;;
grid)
  half_grid
  ;;
wide)
  for g in eager --graph; do
    [ $g = eager ] && g=""
    for c in lstm gru; do
      for s in 1,256,30,128 1,256,30,256 1,256,30,512 1,200,200,128; do
        echo "${g:-eager} $c $s | $(bench_rows "$g" $c $s op-bf16-default,op-f16-default,op-bf16-standard,op-f16-static-small-h)"
      done
    done
  done 2>&1 | tee "$OUT/wide.log"
  ;;
profile)
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
  for spec in 3,128,30,512:default 1,128,30,512:default 3,128,30,512:standard; do
    shape=${spec%%:*} v=${spec#*:}
    name=lstm_${shape//,/x}_$v
    timeout 100 "$ncu" --replay-mode application --clock-control none --metrics gpu__time_duration.sum --csv \
      "$bin/bench_grid" --no-loop --loss sum --input-grad --warmup 1 --reps 2 --api direct --phase train \
      --mode lstm --shape $shape --variants op-bf16-$v > "$OUT/$name.csv" 2> "$OUT/$name.log"
    echo "$name rc=$?"
  done
  (cd "$OUT" && tar czf ncu.tgz *.csv *.log && rm -f *.csv *.log)
  ;;
check)
  stamp "gpu_check --persistent --mode gru"
  timeout ${CHECK_TIMEOUT:-560} "$D/gpu_check" --persistent --mode gru --seed 2711 > "$OUT/gpu_check.log" 2>&1
  echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"
  grep -E '\| FAIL \|' "$OUT/gpu_check.log" | head
  ;;
tests)
  stamp "GPU tests"; gpu_tests
  ;;
*)
  echo "usage: run.sh DIR OUT probe|eager|stacks|rules|grid|wide|profile|check|tests" >&2
  exit 2
  ;;
esac
