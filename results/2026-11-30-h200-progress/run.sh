#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh (or its bench_grid, gpu_check and
# op-gpu-tests alone) built with the backward's progress (`CANDLE_RNN_PERSISTENT_PROGRESS`), in
# DIR, with DIR/cupti (../2026-11-26-h200-graph-kernels/'s CUPTI injection library and CUPTI):
#   trace:  every node of replayed graphed training calls (bf16 default, --api direct) at
#           TRACE_SPECS (CELL:L,B,T,H ...), with CANDLE_RNN_PERSISTENT_PROGRESS=PROGRESS_STEPS
#           (10 unless set) and 0: each graph's span, time in nodes and every node with its
#           median duration and the gap before it (OUT/trace.log; raw records OUT/trace.tgz).
#   results/2026-11-30-h200-progress/run.sh DIR OUT trace
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
case $PART in
trace)
  [ -f "$D/cupti/libcupti.so.13" ] || xz -dk "$D/cupti/libcupti.so.13.xz"
  export LD_LIBRARY_PATH="$bin/cupti:${LD_LIBRARY_PATH:-}"
  analyze=$here/../2026-11-26-h200-graph-kernels/analyze.py
  for spec in ${TRACE_SPECS:-lstm:1,32,30,128 lstm:1,32,30,1024}; do
    cell=${spec%%:*} shape=${spec#*:}
    for steps in ${PROGRESS_STEPS:-10} 0; do
      name="op_${cell}_${shape//,/x}_p$steps"
      CANDLE_RNN_PERSISTENT_PROGRESS=$steps CUDA_INJECTION64_PATH=$bin/cupti/libtrace_kernels.so \
        TRACE_OUT=$OUT/$name.csv timeout 120 "$D/bench_grid" --no-loop --graph --loss sum \
        --input-grad --reps 20 --warmup 5 --api direct --mode $cell --shape $shape \
        --variants op-bf16-default --phase train > "$OUT/$name.out" 2>&1
      echo "### $name rc=$? $(grep -E '^\| (Lstm|Gru) ' "$OUT/$name.out" | cut -d'|' -f7,8 | tr '\n' ' ')"
      python3 "$analyze" "$OUT/$name.csv" 10
    done
  done > "$OUT/trace.log" 2>&1
  (cd "$OUT" && tar czf trace.tgz ./*.csv ./*.out && rm -f ./*.csv ./*.out)
  grep -E "^(###|graph)" "$OUT/trace.log"
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
