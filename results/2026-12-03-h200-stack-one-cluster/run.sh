#!/usr/bin/env bash
# Written 2026-12-02, not run yet: rename the folder to the day and GPU it runs on. A follow-up to
# ../2026-12-02-h200-bidir-layer-plans/. There a bidirectional stack was planned with the module's
# layers, though each launch runs one layer, and lost the one-layer paths. A one-direction stack
# at batch > 32 (short of a deep narrow stack) also runs layer by layer, in batch groups
# (`rules.rs`'s `shape_groups`). Its plan is still a stack's: `one_cluster_step` (one cluster a
# group, pushed h, gates in registers) takes one layer only. This measures, without a code change,
# whether one cluster a group would pay there: the rule / CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1
# (one cluster wherever one fits) / the rule, graphed f16 default, training with dx | forward,
# one direction, at SPECS. Each shape's plans, as the op printed them
# (CANDLE_RNN_PERSISTENT_SHOW_PLANS=1), go to OUT/plans.log. Then PyTorch's fp16 module at the
# same shapes (OUT/torch.txt). From the repository root, with D (scripts/devbin.sh binaries of
# main) and OUT set:
#   D=... OUT=... results/2026-12-03-h200-stack-one-cluster/run.sh probe
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
SPECS=${SPECS:-"lstm:2,64,30,128 gru:2,64,30,128 lstm:2,128,30,128 lstm:3,128,30,128
  lstm:2,64,30,256 lstm:2,128,30,256 lstm:2,64,30,512 lstm:3,128,30,512 gru:3,128,30,512
  lstm:3,128,200,512"}
case $1 in
  probe)
    stamp probe
    export v=op-f16-default graph=--graph
    for spec in $SPECS; do
      c=${spec%%:*} sh=${spec#*:}
      echo "$c $sh | rule $(bench_with X=1) | one cluster $(bench_with CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1)" \
        "| rule $(bench_with X=1)"
      for oc in "" 1; do
        echo "## $c $sh one cluster ${oc:-rule}"
        env ${oc:+CANDLE_RNN_PERSISTENT_ONE_CLUSTER=$oc} CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 60 \
          "$D/bench_grid" --no-loop --graph --loss sum --input-grad --reps 1 --warmup 0 \
          --api direct --mode $c --shape $sh --variants op-f16-default 2>&1 >/dev/null \
          | grep -m4 "candle-cudnn-rnn:"
      done >> "$OUT/plans.log"
    done | tee "$OUT/probe.txt"
    only=$(for spec in $SPECS; do echo "--only ${spec/:/,}"; done)
    # shellcheck disable=SC2086
    timeout 200 python3 scripts/torch_reference.py --grid --graph --impls torch-fp16 --loss sum \
      --input-grad --reps 10 --warmup 5 $only 2>>"$OUT/stderr.txt" | grep -iE "^\| (lstm|gru) " \
      | tee "$OUT/torch.txt"
    stamp done
    ;;
esac
