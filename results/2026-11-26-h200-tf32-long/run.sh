#!/usr/bin/env bash
# On the GPU machine, DIR/bench_grid (86dc7a4: the weight gradient zeroed between cuDNN's
# BackwardData and BackwardWeights) and DIR/old-bench_grid (88df6ef: zeroed before) against
# PyTorch's TF32 module on the two shapes the grid left at 1.01x PyTorch
# (results/2026-11-26-h200-grid-fill/): GRU and LSTM [200, 128, 3 x 1024] TF32, graphed
# training calls as the grid times them, four rounds in rotating order; then one replayed
# call of each (the new op and PyTorch), its nodes summed by kernel
# (results/2026-11-26-h200-graph-kernels/'s tracer).
#   results/2026-11-26-h200-tf32-long/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--loss sum --input-grad --reps 10 --warmup 3"
one() {  # who cell shape log
  case $1 in
    old) "$D/old-bench_grid" --no-loop --graph $how --api direct --mode $2 --shape $3 --variants op-tf32-default > "$4" 2>&1 ;;
    new) "$D/bench_grid" --no-loop --graph $how --api direct --mode $2 --shape $3 --variants op-tf32-default > "$4" 2>&1 ;;
    torch) python3 scripts/torch_reference.py --grid --graph $how --only $2,$3 --impls torch-tf32 > "$4" 2>&1 ;;
  esac
  grep -E '^\| (lstm|gru|Lstm|Gru) ' "$4" | cut -d'|' -f8 | head -1 | tr -d ' '
}
for cell in gru lstm; do
  shape=3,128,200,1024
  stamp "$cell [200, 128, 3 x 1024] TF32, train µs an example"
  for order in "old new torch" "new torch old" "torch old new" "old new torch"; do
    line=""
    for who in $order; do line="$line $who $(one $who $cell $shape "$OUT/${cell}_$who.log")"; done
    echo "  $line"
  done
done
for who in new torch; do
  for cell in gru lstm; do
    name=trace_${who}_$cell
    case $who in
      new) CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv \
        "$D/bench_grid" --no-loop --graph --loss sum --input-grad --reps 5 --warmup 2 --api direct --mode $cell --shape 3,128,200,1024 --variants op-tf32-default > "$OUT/$name.log" 2>&1 ;;
      torch) CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv \
        python3 scripts/torch_reference.py --grid --graph --loss sum --input-grad --reps 5 --warmup 2 --only $cell,3,128,200,1024 --impls torch-tf32 > "$OUT/$name.log" 2>&1 ;;
    esac
    python3 results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/$name.csv" 3 --by-name > "$OUT/$name.txt"
    rm -f "$OUT/$name.csv"
    echo "$name:"; head -12 "$OUT/$name.txt" | cut -c1-120
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
