#!/usr/bin/env bash
# On the GPU machine, bench_grid of `scripts/devbin.sh DIR` at 86dc7a4 (the weight gradient
# zeroed between cuDNN's BackwardData and BackwardWeights): the whole grid in every precision
# class against PyTorch (scripts/compare-grid.sh, as results/2026-11-26-h200-grid/), then the
# nodes of one replayed training call on the crate's own kernels (LSTM [30, 32, 1024] bf16 and
# PTB large's [35, 20, 2 x 1500] bf16 as ptb-lm calls it), with
# results/2026-11-26-h200-graph-kernels/'s tracer: what a call holds besides its recurrences.
#   results/2026-11-26-h200-grid-fill/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "the grid"
timeout 520 scripts/compare-grid.sh "$D/bench_grid" "$OUT/grid" 10 3 > "$OUT/grid.log" 2>&1
echo "compare-grid rc=$?"
grep -E "^\| (fp32|tf32|half) " "$OUT/grid/table.md"
for c in lstm:1,32,30,1024:direct lstm:2,20,35,1500:sink-overwrite; do
  IFS=: read -r cell shape api <<< "$c"
  name=trace_${cell}_${shape}
  CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv timeout 60 \
    "$D/bench_grid" --no-loop --graph --loss sum --input-grad --reps 20 --warmup 5 --api $api \
    --mode $cell --shape $shape --variants op-bf16-default > "$OUT/$name.log" 2>&1
  python3 results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/$name.csv" 5 > "$OUT/$name.txt"
  rm -f "$OUT/$name.csv"
  echo "$name: $(grep '^graph' "$OUT/$name.txt")"
done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt ! -name 'trace_*.txt' -delete)
stamp "done"
