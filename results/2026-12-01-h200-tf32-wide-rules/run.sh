#!/usr/bin/env bash
# On the GPU machine: TF32's rule (`choose.rs`'s `ours_lead_tf32`) past where it was measured.
# With the training forward on scaled f16 operands (`results/2026-12-01-h200-tf32-scaled-training/`)
# ours plan TF32 training at hidden 1024 past batch 32, and at batches past 128 they were never
# measured against cuDNN. DIR built as `scripts/devbin.sh DIR` builds it:
#   1. (sweep1, sweep2, sweep3; on 04741ac, before the rule changed) graphed training with the
#      input's gradient, µs an example, ours (op-tf32-persistent) beside the default (cuDNN's
#      `Standard` or `PersistStaticSmallH` where the rule left the call there):
#      sweep1 at hidden 512-1024, one and three layers, batch 32-128 (OUT/sweep1.log, the plans
#      in OUT/sweep1-plans.txt); sweep2 at three layers of 1024 at batch 32-96, [35, 20-64,
#      2 x 1500], batch 256 at hidden 512-1024 (OUT/sweep2.log); sweep3 at batch 192-256 and
#      hidden 128-768, with the forwards alone (OUT/sweep3.log).
#   2. (check) `gpu_check --persistent --dtype tf32`, now with the training rows of hidden 1024
#      past batch 32 (OUT/gpu_check.log).
#   3. (confirm) the default (ours where the new rule gives them the call) beside `Standard`,
#      then PyTorch's TF32 module, then the default again, graphed (OUT/confirm.log, PyTorch's
#      rows in OUT/torch-tf32*.log).
#   4. (sanitize) compute-sanitizer memcheck, racecheck and synccheck on TF32 training with the
#      input's gradient: a layer of 1024 at batch 64 (chunks of 64 in clusters of 2, the forward
#      scaled) and a GRU at [*, 128, 128] in 16 batch groups (OUT/sanitize.log).
#   5. (grid) scripts/compare-grid.sh in TF32, the op's default against PyTorch's TF32 module
#      (OUT/grid.log, OUT/table.md, OUT/grid.tgz).
# logs/before/ holds sweep1-3 (on 04741ac).
#   results/2026-12-01-h200-tf32-wide-rules/run.sh DIR OUT [sweep1|sweep2|sweep3|check|confirm|sanitize|grid]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-check}
source scripts/on-gpu.sh
confirm_specs="lstm:1,128,30,1024 gru:1,128,30,1024 lstm:1,64,200,1024 gru:1,64,200,1024
  lstm:3,32,30,1024 gru:3,32,30,1024 lstm:3,64,30,768 gru:3,64,30,768 lstm:1,256,30,128
  gru:1,256,30,128 lstm:1,256,30,512 gru:1,256,30,512 lstm:3,256,30,512 gru:3,256,30,512"
for part in $parts; do
  case $part in
    sweep1)
      stamp "sweep1"
      specs=$(for c in lstm gru; do for sh in 1,32,30,512 1,128,30,512 3,128,30,512 3,32,200,512 \
        1,32,30,1024 1,32,200,1024 1,128,200,1024 3,32,30,1024 3,128,30,1024 3,128,200,1024; do
        echo "$c:$sh"; done; done)
      beside_default tf32 "$specs" --graph | tee "$OUT/sweep1.log"
      for spec in $specs; do
        CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 60 "$D/bench_grid" --no-loop --loss sum --input-grad \
          --reps 1 --warmup 0 --mode ${spec%%:*} --shape ${spec#*:} --variants op-tf32-persistent \
          > /dev/null 2>> "$OUT/sweep1-plans.txt"
      done
      ;;
    sweep2)
      stamp "sweep2"
      specs=$(for c in lstm gru; do for sh in 3,64,30,1024 3,32,200,1024 3,64,200,1024 2,20,35,1500 \
        2,64,35,1500 1,256,30,1024 1,64,200,1024 1,96,30,1024 3,96,30,1024 3,128,30,768 1,256,30,512; do
        echo "$c:$sh"; done; done)
      beside_default tf32 "$specs" --graph | tee "$OUT/sweep2.log"
      ;;
    sweep3)
      stamp "sweep3"
      for c in lstm gru; do
        for sh in 3,256,30,512 1,256,200,512 1,192,30,512 1,256,30,256 1,256,30,128 3,64,30,768 \
          1,128,30,768 3,32,30,768 1,256,30,768; do
          echo "training $c $sh | $(bench_rows --graph $c $sh op-tf32-persistent,op-tf32-default)"
          echo "forward $c $sh | $(forward_rows --graph $c $sh op-tf32-persistent,op-tf32-default)"
        done
      done | tee "$OUT/sweep3.log"
      ;;
    check)
      stamp "check"
      gpu_check_persistent --dtype tf32
      ;;
    confirm)
      stamp "confirm"
      {
        for spec in $confirm_specs; do
          c=${spec%%:*} sh=${spec#*:}
          echo "ours $c $sh | $(bench_rows --graph $c $sh op-tf32-default,op-tf32-standard)"
        done
        TORCH_IMPL=torch-tf32 torch_rows torch-tf32 "$(echo $confirm_specs | tr ':' ',')" 240 | grep -- --graph
        for spec in $confirm_specs; do
          c=${spec%%:*} sh=${spec#*:}
          echo "ours again $c $sh | $(bench_rows --graph $c $sh op-tf32-default)"
        done
      } | tee "$OUT/confirm.log"
      ;;
    sanitize)
      stamp "sanitize"
      SAN_TIMEOUT=${SAN_TIMEOUT:-90} sanitize_bench "lstm:1,64,2,1024 gru:1,128,2,128" op-tf32-persistent --input-grad
      ;;
    grid)
      stamp "grid"
      compare_grid torch-tf32 op-tf32-default 450
      ;;
  esac
done
