#!/usr/bin/env bash
# On the GPU machine, DIR/main-bench_grid (main at 188a099: wavefronts past batch 32, the
# default keeping training past batch 32 on cuDNN): stacks at batches 48 and 64 that run as a
# wavefront in chunks, LSTM and GRU, µs an example, train | forward, graphed then eager: ours
# (`persistent`) beside the op's bf16 and f16 defaults (cuDNN), and PyTorch's fp16 module
# graphed.
#   results/2026-11-26-h200-batch64/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
for f in "$D"/main-bench_grid.xz; do [ -x "${f%.xz}" ] || { xz -dkf "$f"; chmod +x "${f%.xz}"; }; done
base="--no-loop --loss sum --input-grad --reps 10 --warmup 10 --api direct --variants op-bf16-persistent,op-bf16-default,op-f16-default"
for c in lstm:2,64,35,200 gru:2,64,35,200 lstm:2,64,35,650 gru:2,64,35,650 lstm:2,48,35,650 gru:2,48,35,650 \
  lstm:2,64,30,512 gru:2,64,30,512 lstm:3,64,30,256 gru:3,64,30,256; do
  IFS=: read -r mode shape <<< "$c"
  IFS=, read -r L B T H <<< "$shape"
  f="$OUT/t_${mode}_${shape//,/x}"
  "$D/main-bench_grid" $base --graph --mode $mode --shape $shape > "$f-g.log" 2>&1
  "$D/main-bench_grid" $base --mode $mode --shape $shape > "$f-e.log" 2>&1
  /opt/torch/.venv/bin/python scripts/torch_reference.py --grid --graph --loss sum --input-grad \
    --impls torch-fp16 --reps 10 --only $mode,$L,$B,$T,$H > "$f-torch.log" 2>&1
  echo "$mode $shape"
  echo "  graphed: $(grep -E '^\| (Lstm|Gru) ' "$f-g.log" | cut -d'|' -f7,8,9 | tr -s ' ' | paste -sd';'); torch fp16: $(grep -E "^\| $mode " "$f-torch.log" | head -1 | cut -d'|' -f8,9 | tr -s ' ')"
  echo "  eager:   $(grep -E '^\| (Lstm|Gru) ' "$f-e.log" | cut -d'|' -f7,8,9 | tr -s ' ' | paste -sd';')"
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
