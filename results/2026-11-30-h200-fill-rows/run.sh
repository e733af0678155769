#!/usr/bin/env bash
# On the GPU machine, bench_grid, gpu_check and op-gpu-tests as scripts/devbin.sh builds them in
# DIR:
#   ab:        CANDLE_RNN_PERSISTENT_TRANSPOSED and CANDLE_RNN_PERSISTENT_PRIORITY (T, P) 1,1 /
#              1,0 / 0,1 / 0,0 / 1,1 (the backward's tile from W_hh transposed, made by the
#              forward on a side stream, or from W_hh itself; the persistent launches at the
#              greatest priority or the default), graphed then eager, training | forward (µs an
#              example) at AB_SHAPES (VARIANT:CELL:L,B,T,H ...) (OUT/ab.log); then each shape's
#              plans with and without the transposed tile (OUT/plans.txt). (PRIORITY is read only
#              by the build with priority.patch.)
#   rule:      the planner's rule (shape_transposed) / CANDLE_RNN_PERSISTENT_TRANSPOSED=0 / the
#              rule, graphed then eager, at RULE_SHAPES (OUT/rule.log).
#   phases:    CANDLE_RNN_PERSISTENT_TRANSPOSED=1 / 0 / 1, graphed, each of bench_grid's phases
#              alone (--phase train, --phase forward: an inference forward in a process that
#              trains nothing) at PHASE_SHAPES (VARIANT:CELL:L,B,T,H ...) (OUT/phases.log).
#   check:     the op's GPU tests and gpu_check --persistent LSTM and GRU, all three at once
#              (OUT/tests.log, OUT/gpu_check-lstm.log, OUT/gpu_check-gru.log).
#   sanitize:  ../2026-11-30-h200-bias-parts/run.sh's, at SAN_SPECS (OUT/sanitize.log).
#   grid:      ../2026-11-30-h200-side-streams/run.sh's (GRID=half|tf32).
#   results/2026-11-30-h200-fill-rows/run.sh DIR OUT ab|rule|phases|check|sanitize|grid
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
shapes=${AB_SHAPES:-"op-bf16-default:lstm:1,32,30,512 op-bf16-default:lstm:1,32,30,1024
  op-bf16-default:gru:1,128,30,512 op-bf16-default:lstm:1,128,30,512 op-bf16-default:gru:1,32,30,512
  op-bf16-default:lstm:3,128,30,512 op-bf16-default:lstm:1,32,30,256 op-bf16-default:lstm:2,20,35,1500
  op-tf32-default:lstm:1,32,30,512 op-tf32-default:gru:2,32,30,512"}
case $PART in
ab)
  for graph in --graph ""; do
    for spec in $shapes; do
      v=${spec%%:*} rest=${spec#*:}
      c=${rest%%:*} sh=${rest#*:}
      t() { bench_with CANDLE_RNN_PERSISTENT_TRANSPOSED=$1 CANDLE_RNN_PERSISTENT_PRIORITY=$2; }
      echo "${graph:-eager} ${API:-direct} $v $c $sh | T1P1 $(t 1 1) | T1P0 $(t 1 0) | T0P1 $(t 0 1) | T0P0 $(t 0 0) | T1P1 $(t 1 1)"
    done
  done 2>&1 | tee -a "$OUT/ab.log"
  graph=--graph
  for spec in $shapes; do
    v=${spec%%:*} rest=${spec#*:}
    c=${rest%%:*} sh=${rest#*:}
    for a in 1 0; do
      CANDLE_RNN_PERSISTENT_TRANSPOSED=$a CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 120 "$D/bench_grid" \
        --no-loop --graph --loss sum --input-grad --reps 1 --warmup 0 --mode $c --shape $sh --variants $v 2>&1 \
        | grep "candle-cudnn-rnn:" | sed "s/^/TRANSPOSED=$a /"
    done
  done > "$OUT/plans.txt"
  ;;
rule)
  for graph in --graph ""; do
    for spec in ${RULE_SHAPES:-op-bf16-default:lstm:1,128,30,256 op-bf16-default:gru:1,128,30,256
      op-bf16-default:lstm:1,64,30,384 op-f16-default:lstm:1,32,30,512 op-f16-default:gru:1,128,30,512
      op-bf16-default:lstm:1,32,30,1024}; do
      v=${spec%%:*} rest=${spec#*:}
      c=${rest%%:*} sh=${rest#*:}
      echo "${graph:-eager} $v $c $sh | rule $(bench_with X=1) | T0 $(bench_with CANDLE_RNN_PERSISTENT_TRANSPOSED=0) | rule $(bench_with X=1)"
    done
  done 2>&1 | tee -a "$OUT/rule.log"
  ;;
phases)
  graph=--graph
  for spec in ${PHASE_SHAPES:-op-bf16-default:lstm:2,20,35,1500 op-bf16-default:lstm:3,128,30,512 op-bf16-default:lstm:1,128,30,512}; do
    v=${spec%%:*} rest=${spec#*:}
    c=${rest%%:*} sh=${rest#*:}
    for phase in train forward; do
      p() { PHASE=$phase bench_with CANDLE_RNN_PERSISTENT_TRANSPOSED=$1; }
      echo "$phase $v $c $sh | T1 $(p 1) | T0 $(p 0) | T1 $(p 1)"
    done
  done 2>&1 | tee -a "$OUT/phases.log"
  ;;
check)
  stamp "GPU tests, gpu_check LSTM and GRU at once"
  gpu_tests > "$OUT/tests-verdict.txt" &
  for m in lstm gru; do
    timeout 560 "$D/gpu_check" --persistent --mode $m --seed 2711 > "$OUT/gpu_check-$m.log" 2>&1 &
  done
  wait
  cat "$OUT/tests-verdict.txt"
  for m in lstm gru; do
    echo "gpu_check $m: $(tail -1 "$OUT/gpu_check-$m.log"), $(grep -c '| ok |' "$OUT/gpu_check-$m.log") ok"
    grep -E '\| FAIL \|' "$OUT/gpu_check-$m.log" | head
  done
  ;;
sanitize) bash "$here/../2026-11-30-h200-bias-parts/run.sh" "$D" "$OUT" sanitize ;;
grid) bash "$here/../2026-11-30-h200-side-streams/run.sh" "$D" "$OUT" grid ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
