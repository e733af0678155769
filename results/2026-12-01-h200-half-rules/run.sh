#!/usr/bin/env bash
# On the GPU machine (run 2026-12-01: logs/first on a first build, logs/final on the rules as
# committed): the half-precision rules that `results/2026-12-01-h200-half-rule-sweep/`
# moved (`choose.rs`: `ours_lead_persist_static`, `small_h_leads_ours`, `ours_lead_in_groups`,
# `ours_lead_wide_batch_stack`, `ours_lead_in_chunks`). Rows: training with the input's gradient
# then the forward, µs an example, each variant with the kernel it ran (`bench_rows`). DIR built
# as `scripts/devbin.sh DIR` builds it:
#   1. (tests) the GPU tests of the default's kernels, among them the new f16 cases at
#      [3, 48, 256] and [3, 48, 3 x 128] (OUT/tests-default.log).
#   2. (confirm) graphed, f16: the default beside ours and the cuDNN kernel the old rule took, at
#      the sweep's shapes that moved (OUT/confirm.log).
#   3. (neighbors) graphed: shapes next to those the sweep did not measure, f16 and bf16
#      (OUT/neighbors.log): one layer's inference at [30, 64-128, 256-384] beside
#      `PersistStatic`; stacks at hidden 128, batches 32-128, beside `PersistStaticSmallH`; bf16
#      past batch 128 beside `Standard`.
#   4. (eager) eager f16 at batch 80-128, hidden 640-768, beside `Standard` (OUT/eager.log).
#   5. (small) graphed f16 stacks at hidden 128, batches 8-32 and 128, beside
#      `PersistStaticSmallH` (OUT/small.log).
#   results/2026-12-01-h200-half-rules/run.sh DIR OUT [tests|confirm|neighbors|eager|small]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-confirm}
source scripts/on-gpu.sh
# CELL:L,B,T,H=VARIANTS (the precision's default and persistent, and the cuDNN kernels named)
rows() {
  local graph=$1 spec c sh p kernels v
  shift
  for spec in "$@"; do
    c=${spec%%:*} sh=${spec#*:} kernels=${sh#*=} sh=${sh%%=*} p=${kernels%%-*}
    v="op-$p-default,op-$p-persistent"
    for k in ${kernels#*-}; do v="$v,op-$p-$k"; done
    echo "$c $sh | $(bench_rows "$graph" $c $sh $v)"
  done
}
for part in $parts; do
  case $part in
    tests)
      stamp "tests"
      gpu_tests_as default the_default_serves_its_rules_kernels
      ;;
    confirm)
      stamp "confirm"
      rows --graph lstm:1,64,30,256=f16-static lstm:1,48,30,512=f16-static \
        lstm:1,64,200,256=f16-static lstm:3,64,30,128=f16-static-small-h \
        gru:3,48,30,128=f16-static-small-h gru:3,96,30,128=f16-static-small-h \
        gru:1,192,30,512=f16-standard gru:2,256,30,512=f16-standard \
        gru:3,192,30,512=f16-standard lstm:2,256,30,256=f16-standard \
        gru:3,256,30,256=f16-standard | tee "$OUT/confirm.log"
      ;;
    neighbors)
      stamp "neighbors"
      rows --graph lstm:1,128,30,256=f16-static lstm:1,64,30,384=f16-static \
        lstm:1,128,30,384=f16-static lstm:3,32,30,128=f16-static-small-h \
        lstm:3,128,30,128=f16-static-small-h gru:3,128,30,128=f16-static-small-h \
        lstm:2,64,30,128=f16-static-small-h gru:2,96,30,128=f16-static-small-h \
        gru:1,256,30,512=bf16-standard gru:2,256,30,512=bf16-standard \
        lstm:2,256,30,256=bf16-standard gru:3,192,30,256=bf16-standard | tee "$OUT/neighbors.log"
      ;;
    eager)
      stamp "eager"
      rows "" lstm:1,96,30,768=f16-standard gru:1,96,30,768=f16-standard \
        lstm:1,80,30,640=f16-standard lstm:1,128,30,768=f16-standard \
        gru:1,96,30,1024=bf16-standard | tee "$OUT/eager.log"
      ;;
    small)
      stamp "small"
      rows --graph lstm:2,32,30,128=f16-static-small-h gru:2,32,30,128=f16-static-small-h \
        gru:3,32,30,128=f16-static-small-h lstm:2,16,30,128=f16-static-small-h \
        gru:3,16,30,128=f16-static-small-h lstm:3,8,30,128=f16-static-small-h \
        gru:2,24,35,128=f16-static-small-h lstm:2,128,30,128=f16-static-small-h \
        gru:2,128,200,128=f16-static-small-h lstm:3,128,200,128=f16-static-small-h \
        lstm:2,256,30,128=f16-static-small-h | tee "$OUT/small.log"
      ;;
  esac
done
