#!/usr/bin/env bash
# On the GPU machine: main with both scaled-operand changes (TF32 training's forward on scaled
# f16 operands, `results/2026-12-01-h200-tf32-scaled-training/`; scaled inference plans on half
# precision's batch groups and one-cluster sizes, `results/2026-12-01-h200-tf32-scaled-half-rules/`)
# and the TF32 rule that gives ours a small GRU's inference up to batch 128 (`choose.rs`'s
# `ours_lead_tf32`). DIR built as `scripts/devbin.sh DIR` builds it:
#   1. (tests) the whole GPU test suite (OUT/tests.log).
#   2. (small) a GRU at hidden 128, graphed, µs an example: inference forwards of the default,
#      ours and cuDNN's `PersistStaticSmallH` at batches 48-128, seq 30 and 200; training (with
#      the input's gradient) of ours and `PersistStaticSmallH` at batches 64 and 128
#      (OUT/small.log).
#   2b. (train) as `small`'s training, at [30, 48 and 96, 128] and [200, 48 and 64, 128]
#      (OUT/train.log).
#   2c. (confirm) on the build with the rule's training bound (a small GRU's training on ours
#      up to batch 64) and dropout.rs's bf16 step for x: the dropout GPU tests
#      (OUT/tests-dropout.log), then the default's training beside `PersistStaticSmallH`'s at
#      GRU [30, 48-128, 128] and [200, 64, 128] (OUT/confirm.log).
#   2d. (groups) ours' TF32 training (the forward scaled), graphed, with the rules' batch groups
#      and with 16 and 8, LSTM and GRU at hidden 128-256, batch 48-128 (OUT/groups.log).
#   2e. (groups2) as `groups`, the counts half precision's rule gives where they differ from
#      16 and 8 ([30, 48, 128] 6, [30, 96, 128] 12) and hidden 512 (8 against the rules' 4), one
#      layer and three (OUT/groups2.log).
#   2f. (final) on the build with half precision's groups for scaled training plans and a small
#      GRU's training on ours up to batch 128: the GPU tests of TF32, dropout and batch groups
#      (OUT/tests-*.log), then the default's training beside `PersistStaticSmallH`'s, GRU at
#      [30, 96-128, 128], [200, 128, 128] and [30, 128, 64], and the default's alone at LSTM
#      [30, 128, 128-256]; then the default's training against TF32's group counts where half
#      precision's differ ([30, 8, 128], [30, 16-128, 64]) (OUT/final.log).
#   2g. (probe) ours' TF32 training where the rules were not measured: at
#      [30, 32-64, 128] in clusters of 16 (`CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1`; training plans keep TF32's
#      one-cluster sizes), and at [30, 64-128, 1024] op-tf32-persistent beside `Standard`
#      (whether ours plans there now that the forward is scaled; OUT/probe.log, the plans in
#      OUT/probe-plans.txt).
#   3. (grid) scripts/compare-grid.sh in TF32: the op's default against PyTorch's TF32 module
#      (OUT/grid.log, OUT/table.md, OUT/grid.tgz).
#   4. (check) `gpu_check --persistent --dtype tf32`, both cells (OUT/gpu_check.log).
# logs/rules/ holds tests, small, train, grid and check (on 30ff963) and confirm, groups and
# groups2 (on 4a803dd); logs/final/ holds final (on fd37726); logs/last/ holds tests, grid, check
# and probe (on 04741ac: the final rules, with the GPU tests' new cases).
#   results/2026-12-01-h200-tf32-scaled-rules/run.sh DIR OUT [tests|small|train|confirm|groups|groups2|final|probe|grid|check]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-tests}
source scripts/on-gpu.sh
for part in $parts; do
  case $part in
    tests)
      stamp "tests"
      gpu_tests
      ;;
    small)
      stamp "small"
      {
        for sh in 1,48,30,128 1,64,30,128 1,96,30,128 1,128,30,128 1,64,200,128 1,128,200,128; do
          echo "forward gru $sh | $(forward_rows --graph gru $sh op-tf32-default,op-tf32-persistent,op-tf32-static-small-h)"
        done
        for sh in 1,64,30,128 1,128,30,128; do
          echo "training gru $sh | $(bench_rows --graph gru $sh op-tf32-persistent,op-tf32-static-small-h)"
        done
      } | tee "$OUT/small.log"
      ;;
    train)
      stamp "train"
      for sh in 1,48,30,128 1,96,30,128 1,48,200,128 1,64,200,128; do
        echo "training gru $sh | $(bench_rows --graph gru $sh op-tf32-persistent,op-tf32-static-small-h)"
      done | tee "$OUT/train.log"
      ;;
    confirm)
      stamp "confirm"
      gpu_tests_as dropout dropout
      for sh in 1,48,30,128 1,64,30,128 1,96,30,128 1,128,30,128 1,64,200,128; do
        echo "training gru $sh | $(bench_rows --graph gru $sh op-tf32-default,op-tf32-static-small-h)"
      done | tee "$OUT/confirm.log"
      # Ours' training at GRU [30, 128, 128] on other batch groups and one-cluster sizes than
      # the TF32 rules' (the plans into OUT/plans.txt).
      graph=--graph v=op-tf32-persistent c=gru sh=1,128,30,128
      CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 60 "$D/bench_grid" --no-loop --graph --loss sum \
        --input-grad --reps 2 --warmup 1 --mode gru --shape $sh --variants $v > /dev/null 2> "$OUT/plans.txt"
      echo "knobs gru $sh | rules $(bench_with X=1) | groups 16 $(bench_with CANDLE_RNN_PERSISTENT_GROUPS=16)" \
        "| groups 8 $(bench_with CANDLE_RNN_PERSISTENT_GROUPS=8)" \
        "| groups 16, the largest cluster that fits $(bench_with CANDLE_RNN_PERSISTENT_GROUPS=16 CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1)" \
        "| rules $(bench_with X=1)" | tee -a "$OUT/confirm.log"
      ;;
    groups)
      stamp "groups"
      graph=--graph v=op-tf32-persistent
      for sh in 1,128,30,128 1,96,30,128 1,64,30,128 1,48,30,128 1,128,200,128 1,128,30,256; do
        for c in lstm gru; do
          echo "$c $sh | rules $(bench_with X=1) | groups 16 $(bench_with CANDLE_RNN_PERSISTENT_GROUPS=16)" \
            "| groups 8 $(bench_with CANDLE_RNN_PERSISTENT_GROUPS=8) | rules $(bench_with X=1)"
        done
      done | tee "$OUT/groups.log"
      ;;
    groups2)
      stamp "groups2"
      graph=--graph v=op-tf32-persistent
      for spec in 1,48,30,128:6 1,96,30,128:12 1,128,30,512:8 1,64,30,512:8 3,128,30,512:8; do
        sh=${spec%:*} n=${spec#*:}
        for c in lstm gru; do
          echo "$c $sh | rules $(bench_with X=1) | groups $n $(bench_with CANDLE_RNN_PERSISTENT_GROUPS=$n)" \
            "| rules $(bench_with X=1)"
        done
      done | tee "$OUT/groups2.log"
      ;;
    final)
      stamp "final"
      gpu_tests_as tf32 persistent_tf32
      gpu_tests_as dropout dropout
      gpu_tests_as groups persistent_batch_groups
      {
        for sh in 1,96,30,128 1,128,30,128 1,128,200,128 1,128,30,64; do
          echo "training gru $sh | $(bench_rows --graph gru $sh op-tf32-default,op-tf32-static-small-h)"
        done
        for sh in 1,128,30,128 1,128,30,256; do
          echo "training lstm $sh | $(bench_rows --graph lstm $sh op-tf32-default)"
        done
        # Where half precision's groups differ from TF32's at small batches and hidden 64:
        # the default's against TF32's count.
        graph=--graph v=op-tf32-default
        for spec in 1,8,30,128:1 1,16,30,64:4 1,128,30,64:4; do
          sh=${spec%:*} n=${spec#*:}
          for c in lstm gru; do
            echo "training $c $sh | default $(bench_with X=1) | groups $n $(bench_with CANDLE_RNN_PERSISTENT_GROUPS=$n)"
          done
        done
      } | tee "$OUT/final.log"
      ;;
    probe)
      stamp "probe"
      {
        graph=--graph v=op-tf32-persistent
        for sh in 1,64,30,128 1,32,30,128; do
          for c in lstm gru; do
            echo "training $c $sh | rules $(bench_with X=1) | largest cluster $(bench_with CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1)" \
              "| rules $(bench_with X=1)"
          done
        done
        for sh in 1,64,30,1024 1,128,30,1024; do
          for c in lstm gru; do
            echo "training $c $sh | $(bench_rows --graph $c $sh op-tf32-persistent,op-tf32-standard,op-tf32-default)"
            CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 60 "$D/bench_grid" --no-loop --loss sum --input-grad \
              --reps 1 --warmup 0 --mode $c --shape $sh --variants op-tf32-persistent > /dev/null 2>> "$OUT/probe-plans.txt"
          done
        done
      } | tee "$OUT/probe.log"
      ;;
    grid)
      stamp "grid"
      compare_grid torch-tf32 op-tf32-default 450
      ;;
    check)
      stamp "check"
      gpu_check_persistent --dtype tf32
      ;;
  esac
done
