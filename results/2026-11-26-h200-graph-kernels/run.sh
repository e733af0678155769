#!/usr/bin/env bash
# On the GPU machine, bench_grid of `scripts/devbin.sh DIR` at main and DIR/cupti (this folder's
# trace_kernels.c built, with CUPTI's library): every node of replayed graphs of one training
# call, the op's and PyTorch's, with its device start and end, on the two shapes where the op's
# cuDNN calls trail PyTorch's with the same kernels: LSTM [30, 32, 1024] f16 (PersistStatic
# both) and GRU [30, 128, 1024] TF32 (Standard both). Where do the op's extra microseconds lie:
# in kernels or between them? Twice each, op / PyTorch / PyTorch / op.
#   results/2026-11-26-h200-graph-kernels/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--loss sum --input-grad --reps 20 --warmup 5"
trace() {  # name, command...
  local name=$1; shift
  stamp "$name"
  CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv timeout 200 "$@" > "$OUT/$name.log" 2>&1
  echo "rc=$? $(grep -E '^\| (lstm|gru|Lstm|Gru) ' "$OUT/$name.log" | cut -d'|' -f7,8 | tr '\n' ' ')"
  python3 "$here/analyze.py" "$OUT/$name.csv" 10 > "$OUT/$name.txt"
  grep "^graph" "$OUT/$name.txt"
}
for c in lstm:1,32,30,1024:op-f16-default:torch-fp16 gru:1,128,30,1024:op-tf32-default:torch-tf32; do
  IFS=: read -r cell shape ours theirs <<< "$c"
  op() { trace "op_${cell}_$1" "$D/bench_grid" --no-loop --graph $how --api direct --mode $cell --shape $shape --variants $ours; }
  torch() { trace "torch_${cell}_$1" python3 scripts/torch_reference.py --grid --graph $how --only $cell,$shape --impls $theirs; }
  op a; torch a; torch b; op b
done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./*.csv ./*.log && rm -f ./*.csv ./*.log)
stamp "done"
