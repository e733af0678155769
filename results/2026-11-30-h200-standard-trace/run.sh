#!/usr/bin/env bash
# On the GPU machine, bench_grid, gpu_check and op-gpu-tests as scripts/devbin.sh builds them,
# in DIR, with DIR/cupti (../2026-11-26-h200-graph-kernels/'s CUPTI injection library and
# CUPTI's library, xz-compressed):
#   tests:  the op's GPU tests (../2026-11-30-h200-side-streams/run.sh's part; OUT/tests.log).
#   trace:  every node of replayed graphs of a training call and an inference forward, the op's
#           and PyTorch's, op / PyTorch / PyTorch / op, at TRACE_SPECS (CELL:L,B,T,H:OURS:THEIRS
#           ..., default the TF32 3-layer stacks at batch 128, hidden 1024, where cuDNN's
#           `Standard` runs on both sides): OUT/<side>_<cell>_<shape>_<a|b>.txt per trace
#           (../2026-11-26-h200-graph-kernels/analyze.py), the raw records in OUT/trace.tgz.
#   nodes:  every node of the op's replayed graphs alone (one run each) at NODE_SPECS
#           (CELL:L,B,T,H:VARIANT ...): OUT/nodes.txt.
#   check:  gpu_check --persistent --mode MODE (../2026-11-30-h200-side-streams/run.sh's part).
#   results/2026-11-30-h200-standard-trace/run.sh DIR OUT tests|trace|nodes|check
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
case $PART in
tests | check) bash "$here/../2026-11-30-h200-side-streams/run.sh" "$D" "$OUT" "$PART" ;;
nodes)
  [ -f "$D/cupti/libcupti.so.13" ] || xz -dk "$D/cupti/libcupti.so.13.xz"
  export LD_LIBRARY_PATH="$bin/cupti:${LD_LIBRARY_PATH:-}"
  for spec in $NODE_SPECS; do
    IFS=: read -r cell shape ours <<< "$spec"
    csv=$OUT/nodes_${cell}_${shape//,/x}_$ours.csv
    CUDA_INJECTION64_PATH=$bin/cupti/libtrace_kernels.so TRACE_OUT=$csv timeout 150 "$D/bench_grid" \
      --no-loop --graph --loss sum --input-grad --reps 20 --warmup 5 --api "${API:-direct}" --mode $cell \
      --shape $shape --variants $ours > "$csv.log" 2>&1
    echo "### $cell $shape $ours rc=$? $(grep -E '^\| (Lstm|Gru) ' "$csv.log" | cut -d'|' -f7-9)"
    python3 "$here/../2026-11-26-h200-graph-kernels/analyze.py" "$csv" 10
    rm -f "$csv" "$csv.log"
  done > "$OUT/nodes.txt" 2>&1
  grep -E "^(###|graph)" "$OUT/nodes.txt"
  ;;
trace)
  [ -f "$D/cupti/libcupti.so.13" ] || xz -dk "$D/cupti/libcupti.so.13.xz"
  export LD_LIBRARY_PATH="$bin/cupti:${LD_LIBRARY_PATH:-}"
  analyze=$here/../2026-11-26-h200-graph-kernels/analyze.py
  how="--loss sum --input-grad --reps 20 --warmup 5"
  trace() {  # name, command...
    local name=$1; shift
    CUDA_INJECTION64_PATH=$bin/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv timeout 150 "$@" \
      > "$OUT/$name.log" 2>&1
    echo "### $name rc=$? $(grep -E '^\| (lstm|gru|Lstm|Gru) ' "$OUT/$name.log" | cut -d'|' -f7-9 | tr '\n' ' ')"
    python3 "$analyze" "$OUT/$name.csv" 10 > "$OUT/$name.txt"
    grep "^graph" "$OUT/$name.txt"
  }
  for spec in ${TRACE_SPECS:-lstm:3,128,30,1024:op-tf32-default:torch-tf32 gru:3,128,30,1024:op-tf32-default:torch-tf32}; do
    IFS=: read -r cell shape ours theirs <<< "$spec"
    n=${cell}_${shape//,/x}
    op() { trace "op_${n}_$1" "$D/bench_grid" --no-loop --graph $how --api direct --mode $cell --shape $shape --variants $ours; }
    torch() { trace "torch_${n}_$1" python3 scripts/torch_reference.py --grid --graph $how --only $cell,$shape --impls $theirs; }
    op a; torch a; torch b; op b
  done 2>&1 | tee "$OUT/trace.log"
  (cd "$OUT" && tar czf trace.tgz --exclude ./trace.log --exclude ./tests.log ./*.csv ./*.log && rm -f ./*.csv $(ls ./*.log | grep -v -e trace.log -e tests.log))
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
