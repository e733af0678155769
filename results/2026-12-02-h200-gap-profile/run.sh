#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh in DIR (with DIR/cupti: the CUPTI injection
# library of ../2026-11-26-h200-graph-kernels/, built with -Wl,-rpath,'$ORIGIN', and CUPTI's own
# libcupti.so.13.xz beside it):
#   trace:  every node of replayed graphed calls of the bf16 default (training with the input's
#           gradient, then the forward) at the half grid's shapes short of 2x (TRACE_SPECS,
#           CELL:L,B,T,H ...): each graph's span, time in nodes, and every node with its median
#           duration and the gap before it (OUT/trace.log). PyTorch's side is in
#           ../2026-11-30-h200-call-trace/logs/trace.log.
#   ncu:    Nsight Compute on the default's first `persistent_fwd` launch (an eager bf16 forward) at
#           NCU_SHAPES (CELL:L,B,T,H ...): speed of light, warp states, instruction statistics and
#           the warps' stall reasons per issued instruction (OUT/ncu.log).
#   sweep:  ../2026-11-30-h200-knob-sweep/run.sh's sweep with SWEEP (OUT/sweep.log).
#   check:  (a build with weight-grads.patch applied; it did not run) the op's GPU tests of one layer, stacks, the GRU, single biases and
#           batch groups against the f64 reference (OUT/tests-fused.log); `gpu_check --persistent`
#           in bf16 and f16 (OUT/gpu_check-*.log); compute-sanitizer memcheck, racecheck and
#           synccheck on bf16 training with the input's gradient at LSTM [6, 16, 128], GRU
#           [6, 16, 128] and LSTM [2, 8, 3, 64] x 2 layers (OUT/sanitize.log).
#   fused:  (a build with weight-grads.patch applied) graphed bf16 and f16 training | forward (µs an example, `--api direct`), the default /
#           CANDLE_RNN_PERSISTENT_FUSED_WEIGHT_GRADS=0 (cuBLAS's products) / the default, at
#           FUSED_SPECS (CELL:L,B,T,H ...); then bf16 through `loss.backward()` (`--api plain`) and
#           eagerly at the first two (OUT/fused.log).
#   results/2026-12-02-h200-gap-profile/run.sh DIR OUT trace|ncu|sweep|check|fused
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
case $PART in
trace)
  [ -f "$bin/cupti/libcupti.so.13" ] || xz -dk "$bin/cupti/libcupti.so.13.xz"
  analyze=$here/../2026-11-26-h200-graph-kernels/analyze.py
  for spec in ${TRACE_SPECS:-lstm:1,128,30,128 gru:1,128,30,128 lstm:1,32,30,512 lstm:1,32,30,1024 gru:1,128,30,512 lstm:3,128,30,512}; do
    cell=${spec%%:*} shape=${spec#*:} name=op_${spec/:/_}
    CUDA_INJECTION64_PATH=$bin/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv timeout 120 \
      "$D/bench_grid" --no-loop --graph --loss sum --input-grad --reps 20 --warmup 5 --api direct \
      --mode $cell --shape $shape --variants op-bf16-default > "$OUT/$name.out" 2>&1
    echo "### $name rc=$? $(grep -E '^\| (Lstm|Gru) ' "$OUT/$name.out" | cut -d'|' -f7,8,9 | tr '\n' ' ')"
    python3 "$analyze" "$OUT/$name.csv" 10
  done > "$OUT/trace.log" 2>&1
  rm -f "$OUT"/op_*.csv "$OUT"/op_*.out
  grep -E "^(###|graph)" "$OUT/trace.log"
  ;;
ncu)
  ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
  for cs in ${NCU_SHAPES:-lstm:1,128,30,128 lstm:1,32,30,512}; do
    echo "### ${cs}"
    timeout 150 "$ncu_bin" --clock-control none --section SpeedOfLight --section WarpStateStats \
      --section ComputeWorkloadAnalysis --section InstructionStats --section LaunchStats \
      --section MemoryWorkloadAnalysis \
      --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio \
      -k regex:persistent_fwd --launch-count 1 "$D/bench_grid" --no-loop --phase forward \
      --reps 1 --warmup 0 --api direct --mode ${cs%%:*} --shape ${cs#*:} --variants op-bf16-default 2>&1 \
      | grep -vE '^\| (Lstm|Gru)|^==PROF==' | sed -n '/persistent_fwd/,$p'
  done 2>&1 | tee "$OUT/ncu.log"
  ;;
sweep)
  bash "$here/../2026-11-30-h200-knob-sweep/run.sh" "$D" "$OUT" sweep
  ;;
check)
  gpu_tests_as fused persistent_lstm_one_layer persistent_lstm_stacks persistent_gru_matches \
    persistent_single_and_no_bias persistent_batch_groups
  for dt in bf16 f16; do
    gpu_check_persistent --dtype $dt; mv "$OUT/gpu_check.log" "$OUT/gpu_check-$dt.log"
  done
  sanitize_bench "lstm:1,16,6,128 gru:1,16,6,128 lstm:2,8,3,64" op-bf16-persistent --phase train --input-grad
  ;;
fused)
  specs=${FUSED_SPECS:-lstm:1,128,30,128 gru:1,128,30,128 lstm:1,32,30,128 gru:1,32,30,128 lstm:1,64,30,64 lstm:1,128,200,128 gru:3,64,30,128 lstm:1,8,30,128}
  for spec in $specs; do
    c=${spec%%:*} sh=${spec#*:}
    for v in op-bf16-default op-f16-default; do
      graph=--graph
      echo "$v $c $sh | $(bench_with X=1) | off $(bench_with CANDLE_RNN_PERSISTENT_FUSED_WEIGHT_GRADS=0) | $(bench_with X=1)"
    done
  done 2>&1 | tee "$OUT/fused.log"
  v=op-bf16-default
  for spec in $(echo $specs | cut -d' ' -f1-2); do
    c=${spec%%:*} sh=${spec#*:}
    graph=--graph
    echo "plain $c $sh | $(API=plain bench_with X=1) | off $(API=plain bench_with CANDLE_RNN_PERSISTENT_FUSED_WEIGHT_GRADS=0) | $(API=plain bench_with X=1)"
    graph=""
    echo "eager $c $sh | $(bench_with X=1) | off $(bench_with CANDLE_RNN_PERSISTENT_FUSED_WEIGHT_GRADS=0) | $(bench_with X=1)"
  done 2>&1 | tee -a "$OUT/fused.log"
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
