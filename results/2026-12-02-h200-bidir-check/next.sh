#!/usr/bin/env bash
# Not run yet: where `loss.backward()` spends the time it adds over the sink (about 140 µs a call
# at a bidirectional GRU [30, 128, 1024] on cuDNN's `Standard`, README.md). Every node of replayed
# graphed training calls (with the input's gradient) of the f16 default, through the sink
# (`--api direct`) and through `loss.backward()` (`--api plain`), at TRACE_SPECS (CELL:L,B,T,H
# ...; `bi` after the shape: bidirectional), each graph's span, time in nodes, and every node
# with its median duration and the gap before it (OUT/trace.log). D must hold `cupti/`
# (`libtrace_kernels.so` and `libcupti.so.13.xz`, as ../2026-12-02-h200-gap-profile/ used).
#   D=... OUT=... results/2026-12-02-h200-bidir-check/next.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
source scripts/on-gpu.sh
[ -f "$bin/cupti/libcupti.so.13" ] || xz -dk "$bin/cupti/libcupti.so.13.xz"
analyze=$here/../2026-11-26-h200-graph-kernels/analyze.py
for spec in ${TRACE_SPECS:-gru:1,128,30,1024:bi lstm:3,128,30,1024 lstm:1,32,30,1024}; do
  cell=${spec%%:*} rest=${spec#*:} shape=${rest%%:*}
  bi=$([ "${rest#*:}" = bi ] && echo --bidirectional)
  for api in direct plain; do
    name=op_${cell}_${shape//,/x}${bi:+_bi}_$api
    CUDA_INJECTION64_PATH=$bin/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv timeout 120 \
      "$D/bench_grid" --no-loop --graph $bi --loss sum --input-grad --reps 20 --warmup 5 \
      --api $api --phase train --mode "$cell" --shape "$shape" --variants op-f16-default \
      > "$OUT/$name.out" 2>&1
    echo "### $name rc=$? $(grep -E '^\| (Lstm|Gru) ' "$OUT/$name.out" | cut -d'|' -f7,8 | tr '\n' ' ')"
    python3 "$analyze" "$OUT/$name.csv" 10
  done
done > "$OUT/trace.log" 2>&1
rm -f "$OUT"/op_*.csv "$OUT"/op_*.out
grep -E "^(###|graph)" "$OUT/trace.log"
