#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh in DIR:
#   check:  the op's GPU tests of the persistent kernels (the forward with its gates in registers
#           at its edges, one layer, GRUs, clusters of 16, dropout, graph replay), the plans of the
#           register-gates test's shapes (CANDLE_RNN_PERSISTENT_SHOW_PLANS); compute-sanitizer
#           memcheck, racecheck and synccheck on bf16 training with the input's gradient at LSTM
#           and GRU [6, 16, 128] (2 groups of 8, 16 blocks of 8 units), LSTM [5, 3, 66] and GRU
#           [4, 8, 256] (OUT/tests-*.log, OUT/plans.log, OUT/sanitize.log).
#   ab:     graphed training | forward (µs an example, `--api direct`), the kernel on /
#           CANDLE_RNN_PERSISTENT_REG_GATES=0 / on, bf16 and f16, at AB_SPECS
#           (CELL:L,B,T,H ...); then bf16 eagerly and through `loss.backward()` (`--api plain`)
#           at the first two (OUT/ab.log).
#   torch:  the grid's shapes that the change moves (LSTM and GRU [30, 32 | 128, 128]): the bf16
#           default, PyTorch's fp16 module, the bf16 default, graphed and eager (OUT/vs-torch.log).
#   race:   racecheck's one report at GRU [6, 16, 128] (check) again, with every hazard listed
#           (OUT/race-*.log), on the default and with CANDLE_RNN_PERSISTENT_REG_GATES=0, the plans
#           (CANDLE_RNN_PERSISTENT_SHOW_PLANS) and the modules' PTX (OUT/kernel-cache.txz).
#   units:  racecheck at [6, 16, 128], GRU and LSTM, with their plans' units and with the other
#           size (8 or 16 units a block: 2 or 4 gate warps, named barriers of 128 or 256 threads)
#           (OUT/units.log).
#   final:  (the build whose forward blocks have no warps past the helpers) the register-gates
#           GPU test; units; memcheck and synccheck at [6, 16, 128]; ab in bf16 at the grid's four
#           shapes that it moves; torch.
#   last:   (the build whose hand-offs are mbarriers) the register-gates GPU test; memcheck,
#           racecheck and synccheck at LSTM and GRU [6, 16, 128], LSTM [5, 3, 66], GRU [4, 8, 256];
#           ab in bf16 at the grid's four shapes that it moves; torch.
#   short:  last without torch, racecheck alone at [6, 16, 128] (the device time left).
#   gpucheck: `gpu_check --persistent` in bf16, then in f16 (OUT/gpu_check-*.log).
#   results/2026-12-02-h200-register-gates/run.sh DIR OUT check|ab|torch|race|units|final|last|short|gpucheck
# The builds that ran here had the kernel on by default; the library as it landed has it off, so
# every part asks for it (CANDLE_RNN_PERSISTENT_REG_GATES=1) unless the caller sets the knob.
set -uo pipefail
export CANDLE_RNN_PERSISTENT_REG_GATES=${CANDLE_RNN_PERSISTENT_REG_GATES:-1}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
case $PART in
check)
  CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 gpu_tests_as reg persistent_register_gates
  grep -E "reg_gates|Plan \{" "$OUT/tests-reg.log" | grep -oE "hidden: [0-9]+, batch: [0-9]+|reg_gates: [a-z]+" \
    | paste -d' ' - - | sort | uniq -c > "$OUT/plans.log"
  cat "$OUT/plans.log"
  gpu_tests_as persistent persistent_lstm_one_layer persistent_gru_matches persistent_clusters_of_16 \
    dropout_masks_replay_from_the_seed_on_the_persistent dropout_gradients_use_the_forward_masks_on_the_persistent \
    graphed_modules_replay
  sanitize_bench "lstm:1,16,6,128 gru:1,16,6,128 lstm:1,3,5,66 gru:1,8,4,256" op-bf16-persistent --phase train --input-grad
  ;;
ab)
  specs=${AB_SPECS:-lstm:1,128,30,128 gru:1,128,30,128 lstm:1,32,30,128 gru:1,32,30,128 lstm:1,8,30,256 gru:1,32,30,64 lstm:1,4,30,128 lstm:1,128,200,128}
  for spec in $specs; do
    c=${spec%%:*} sh=${spec#*:}
    for v in ${AB_VARIANTS:-op-bf16-default op-f16-default}; do
      graph=--graph
      echo "$v $c $sh | $(bench_with X=1) | off $(bench_with CANDLE_RNN_PERSISTENT_REG_GATES=0) | $(bench_with X=1)"
    done
  done 2>&1 | tee "$OUT/ab.log"
  v=op-bf16-default
  for spec in $(echo $specs | cut -d' ' -f1-2); do
    c=${spec%%:*} sh=${spec#*:}
    graph=--graph
    echo "plain $c $sh | $(API=plain bench_with X=1) | off $(API=plain bench_with CANDLE_RNN_PERSISTENT_REG_GATES=0) | $(API=plain bench_with X=1)"
    graph=""
    echo "eager $c $sh | $(bench_with X=1) | off $(bench_with CANDLE_RNN_PERSISTENT_REG_GATES=0) | $(bench_with X=1)"
  done 2>&1 | tee -a "$OUT/ab.log"
  ;;
torch)
  specs="lstm:1,32,30,128 gru:1,32,30,128 lstm:1,128,30,128 gru:1,128,30,128"
  v=op-bf16-default
  {
    for spec in $specs; do
      c=${spec%%:*} sh=${spec#*:}
      graph=--graph; echo "ours graphed $c $sh | $(bench_with X=1)"
      graph=""; echo "ours eager $c $sh | $(bench_with X=1)"
    done
    torch_rows torch "$(echo $specs | sed 's/:/,/g')"
    for spec in $specs; do
      c=${spec%%:*} sh=${spec#*:}
      graph=--graph; echo "ours graphed $c $sh | $(bench_with X=1)"
      graph=""; echo "ours eager $c $sh | $(bench_with X=1)"
    done
  } 2>&1 | tee "$OUT/vs-torch.log"
  ;;
race)
  for rg in 1 0; do
    CANDLE_RNN_PERSISTENT_REG_GATES=$rg CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 200 "$CS" --tool racecheck \
      --racecheck-report hazard --print-limit 30 "$D/bench_grid" --no-loop --loss sum --api direct --reps 1 \
      --warmup 0 --phase train --input-grad --mode gru --shape 1,16,6,128 --variants op-bf16-persistent \
      > "$OUT/race-$rg.log" 2>&1
    echo "reg_gates=$rg rc=$? $(grep -E 'RACECHECK SUMMARY' "$OUT/race-$rg.log")"
    grep -m4 -E "reg_gates|Race reported|Write access|Read access" "$OUT/race-$rg.log" | cut -c1-300
  done
  ;;
units)
  for run in "gru X=1" "gru CANDLE_RNN_PERSISTENT_UNITS=16" "lstm X=1" "lstm CANDLE_RNN_PERSISTENT_UNITS=8"; do
    set -- $run
    log="$OUT/units-$1-${2%%=*}.log"
    env "$2" CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 200 "$CS" --tool racecheck --print-limit 3 "$D/bench_grid" \
      --no-loop --loss sum --api direct --reps 1 --warmup 0 --phase train --input-grad --mode "$1" \
      --shape 1,16,6,128 --variants op-bf16-persistent > "$log" 2>&1
    echo "$1 $2: $(grep -E 'RACECHECK SUMMARY' "$log" | sed 's/^=* *//') |" \
      "$(grep -m1 -oE 'units: \[[0-9, ]+\]' "$log") $(grep -m1 -oE 'reg_gates: [a-z]+' "$log")"
  done 2>&1 | tee "$OUT/units.log"
  ;;
final)
  gpu_tests_as reg persistent_register_gates
  bash "$0" "$D" "$OUT" units
  SAN_TOOLS="memcheck synccheck" sanitize_bench "lstm:1,16,6,128 gru:1,16,6,128" op-bf16-persistent --phase train --input-grad
  AB_VARIANTS=op-bf16-default AB_SPECS="lstm:1,128,30,128 gru:1,128,30,128 lstm:1,32,30,128 gru:1,32,30,128" \
    bash "$0" "$D" "$OUT" ab
  bash "$0" "$D" "$OUT" torch
  (cd "$OUT" && tar czf raw.tgz units-*.log torch*.log env.txt stderr.txt && rm -f units-*.log torch*.log env.txt stderr.txt)
  ;;
last)
  gpu_tests_as reg persistent_register_gates
  sanitize_bench "lstm:1,16,6,128 gru:1,16,6,128 lstm:1,3,5,66 gru:1,8,4,256" op-bf16-persistent --phase train --input-grad
  AB_VARIANTS=op-bf16-default AB_SPECS="lstm:1,128,30,128 gru:1,128,30,128 lstm:1,32,30,128 gru:1,32,30,128" \
    bash "$0" "$D" "$OUT" ab
  bash "$0" "$D" "$OUT" torch
  (cd "$OUT" && tar czf raw.tgz torch*.log env.txt stderr.txt && rm -f torch*.log env.txt stderr.txt)
  ;;
short)
  gpu_tests_as reg persistent_register_gates
  SAN_TOOLS=racecheck sanitize_bench "lstm:1,16,6,128 gru:1,16,6,128" op-bf16-persistent --phase train --input-grad
  AB_VARIANTS=op-bf16-default AB_SPECS="lstm:1,128,30,128 gru:1,128,30,128 lstm:1,32,30,128 gru:1,32,30,128" \
    bash "$0" "$D" "$OUT" ab
  ;;
gpucheck)
  for dt in bf16 f16; do
    gpu_check_persistent --dtype $dt; mv "$OUT/gpu_check.log" "$OUT/gpu_check-$dt.log"
  done
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
