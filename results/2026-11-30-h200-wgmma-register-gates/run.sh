#!/usr/bin/env bash
# On the GPU machine: the wgmma forward with its gates summed and stepped in registers (this
# branch's build in DIR) against main's (OLD, the sums through shared memory), both as
# scripts/devbin.sh builds them:
#   check:  the wgmma GPU test on the new build (OUT/tests.log), then compute-sanitizer memcheck,
#           racecheck and synccheck on an inference forward at [4, 128, 1024], LSTM and GRU
#           (OUT/sanitize.log; the logs in OUT/sanitize.tgz).
#   ab:     new / old / new, graphed then eager forwards alone (µs an example) at AB_SHAPES
#           (VARIANT:CELL:L,B,T,H ...) into OUT/ab.log.
#   results/2026-11-30-h200-wgmma-register-gates/run.sh DIR OLD OUT check|ab
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OLD=$2 OUT=$3 PART=$4
source scripts/on-gpu.sh
[ -x "$OLD/bench_grid" ] || xz -dkf "$OLD/bench_grid.xz"
shapes=${AB_SHAPES:-"op-bf16-default:lstm:1,128,30,1024 op-f16-default:gru:1,128,30,1024
  op-bf16-default:lstm:3,128,200,1024 op-bf16-default:gru:3,128,200,1024
  op-bf16-default:lstm:1,64,30,1024 op-f16-default:lstm:1,96,30,1024"}
case $PART in
check)
  stamp "GPU tests (wgmma)"; gpu_tests persistent_wgmma
  for spec in lstm:1,128,4,1024 gru:1,128,4,1024; do
    c=${spec%%:*} sh=${spec#*:}
    for tool in memcheck racecheck synccheck; do
      log="$OUT/cs-$tool-$c-${sh//,/x}.log"
      timeout 150 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum \
        --api direct --reps 1 --warmup 0 --phase forward --mode $c --shape $sh \
        --variants op-bf16-default > "$log" 2>&1
      echo "$tool $c $sh rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//')"
    done
  done 2>&1 | tee "$OUT/sanitize.log"
  (cd "$OUT" && tar czf sanitize.tgz cs-*.log && rm -f cs-*.log)
  ;;
ab)
  for graph in --graph ""; do
    for spec in $shapes; do
      split_spec "$spec"
      t() { PHASE=forward BENCH_GRID=$1 bench_with X=1; }
      echo "${graph:-eager} $v $c $sh | new $(t "$D/bench_grid") | old $(t "$OLD/bench_grid") | new $(t "$D/bench_grid")"
    done
  done 2>&1 | tee -a "$OUT/ab.log"
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
