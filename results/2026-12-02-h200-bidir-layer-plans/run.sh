#!/usr/bin/env bash
# A bidirectional stack planned as one layer (`persistent/mod.rs`'s `planned_layers`): its
# launches each run one layer, but the planner saw the module's layers and gave a stack at batch
# <= 32 one batch group, as for a wavefront (`rules.rs`'s `shape_groups`), and none of the
# one-layer paths (one cluster a group, gates in registers). From the repository root, with D
# (scripts/devbin.sh binaries of the change, old-bench_grid.xz beside them: main before it) and
# OUT set; one command a part:
# - `check`: the bidirectional and dropout GPU tests (OUT/tests-bidir.log, tests-dropout.log),
#   `gpu_check --persistent` f16 and bf16 (new rows: two layers of 128 at batch 32), and
#   compute-sanitizer memcheck, racecheck and synccheck on bidirectional training with dx and
#   dropout 0.5 (f16, `Persistent`) at LSTM [2, 8, 5, 64] and GRU [2, 16, 4, 46];
# - `ab`: graphed f16 default, training with dx | forward, new / old / new at SPECS, every layer
#   bidirectional (OUT/ab.txt), then PyTorch's fp16 module there (OUT/torch.txt).
# - `final` (after `ab` and the subgroup A/B in README.md: the wgmma forward's side-by-side
#   subgroups, `rules.rs`'s `shape_wgmma_side_by_side`): the bidirectional GPU tests
#   (OUT/tests-bidir.log), `gpu_check --persistent` f16 and bf16, compute-sanitizer on a
#   bidirectional inference forward at LSTM [1, 128, 3, 512] (two subgroups side by side), then
#   new / old / new as `ab` at FINAL_SPECS (OUT/final.txt).
#   D=... OUT=... results/2026-12-02-h200-bidir-layer-plans/run.sh check
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
SPECS=${SPECS:-"lstm:2,32,30,128 gru:2,32,30,128 lstm:3,32,30,128 lstm:2,16,30,128
  lstm:2,32,30,256 lstm:2,32,30,512 gru:2,32,30,512 lstm:2,32,200,128 lstm:2,128,30,128
  lstm:2,64,30,256 lstm:3,128,30,512 gru:3,128,30,512 lstm:3,128,30,1024 lstm:2,20,35,1500"}
case $1 in
  check)
    stamp check
    (gpu_tests_as bidir persistent_bidirectional) &
    (gpu_tests_as dropout dropout) &
    (gpu_check_half) &
    (for spec in lstm:2,8,5,64 gru:2,16,4,46; do
      sanitize_bench "$spec" op-f16-persistent --phase train --input-grad --bidirectional \
        --dropout 0.5
    done > /dev/null) &
    wait
    cat "$OUT/sanitize.log"
    stamp done
    ;;
  ab)
    stamp ab
    export v=op-f16-default graph=--graph BENCH_ARGS=--bidirectional
    for spec in $SPECS; do
      c=${spec%%:*} sh=${spec#*:}
      echo "$c $sh | new $(bench_with X=1) | old $(BENCH_GRID=$D/old-bench_grid bench_with X=1)" \
        "| new $(bench_with X=1)"
    done | tee "$OUT/ab.txt"
    only=$(for spec in $SPECS; do echo "--only ${spec/:/,}"; done)
    # shellcheck disable=SC2086
    timeout 200 python3 scripts/torch_reference.py --grid --graph --bidirectional \
      --impls torch-fp16 --loss sum --input-grad --reps 10 --warmup 5 $only \
      2>>"$OUT/stderr.txt" | grep -iE "^\| (lstm|gru) " | tee "$OUT/torch.txt"
    stamp done
    ;;
  final)
    stamp final
    (gpu_tests_as bidir persistent_bidirectional) &
    (gpu_check_half) &
    (sanitize_bench lstm:1,128,3,512 op-f16-default --phase forward --bidirectional > /dev/null) &
    wait
    cat "$OUT/sanitize.log"
    export v=op-f16-default graph=--graph BENCH_ARGS=--bidirectional
    for spec in ${FINAL_SPECS:-lstm:1,128,30,512 gru:1,128,30,512 lstm:3,128,30,512 gru:3,128,30,512
      lstm:3,128,200,512 lstm:2,32,30,128 lstm:1,128,30,1024}; do
      c=${spec%%:*} sh=${spec#*:}
      echo "$c $sh | new $(bench_with X=1) | old $(BENCH_GRID=$D/old-bench_grid bench_with X=1)" \
        "| new $(bench_with X=1)"
    done | tee "$OUT/final.txt"
    stamp done
    ;;
esac
