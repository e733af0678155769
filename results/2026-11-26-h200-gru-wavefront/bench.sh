#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old 46d58bf` with the GRU's
# wavefront: GRU stacks bf16 on the crate's kernels, graphed training and forward, µs an
# example (bench_grid's train | forward columns): the new binary (wavefront where it fits),
# the same with CANDLE_RNN_PERSISTENT_WAVE=0 (layer by layer), the old binary (layer by layer),
# beside PyTorch's fp16 GRU module graphed (torch_reference.py), in the order
# wave, layer, old, torch, wave, layer.
#   results/2026-11-26-h200-gru-wavefront/bench.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "GRU stacks bf16, graphed: training | forward, µs an example"
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --api direct --variants op-bf16-persistent"
for shape in 2,20,35,650 2,20,20,200 3,20,35,200 2,32,30,512 2,32,30,1024 2,20,35,1500; do
  IFS=, read -r L B T H <<< "$shape"
  line=""
  for who in wave layer old torch wave layer; do
    f="$OUT/t_${shape//,/x}_$who.log"
    case $who in
      wave) "$D/bench_grid" $how --mode gru --shape $shape > "$f" 2>&1 ;;
      layer) CANDLE_RNN_PERSISTENT_WAVE=0 "$D/bench_grid" $how --mode gru --shape $shape > "$f" 2>&1 ;;
      old) "$D/old-bench_grid" $how --mode gru --shape $shape > "$f" 2>&1 ;;
      torch) /opt/torch/.venv/bin/python scripts/torch_reference.py --grid --graph --loss sum --input-grad \
               --impls torch-fp16 --reps 10 --only gru,$L,$B,$T,$H > "$f" 2>&1 ;;
    esac
    if [ $who = torch ]; then
      line="$line | torch $(grep -E '^\| gru ' "$f" | head -1 | cut -d'|' -f8,9 | tr -s ' ')"
    else
      line="$line | $who $(grep -E '^\| Gru ' "$f" | head -1 | cut -d'|' -f8,9 | tr -s ' ')"
    fi
  done
  echo "  gru $shape$line"
done
(cd "$OUT" && tar -czf bench.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
