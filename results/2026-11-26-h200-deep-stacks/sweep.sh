#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` (with the GRU's wavefront): stacks of
# 3 and 4 layers at batches up to 32, LSTM and GRU, where the default (`choose.rs`
# `OURS_LEAD_MAX_LAYERS`, 2) sends them to cuDNN. Per shape, µs an example, train | forward:
# graphed (the device's time) then eager (as candle calls it), the op's bf16 and f16 on the
# crate's kernels (`persistent`; graphed also with CANDLE_RNN_PERSISTENT_WAVE=0, layer by layer)
# and its default (cuDNN by the rules), beside PyTorch's fp16 module (graphed, then eager).
#   results/2026-11-26-h200-deep-stacks/sweep.sh DIR OUT [MODE]   (MODE: lstm or gru; both without)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "stacks, µs an example, train | forward"
vars=op-bf16-persistent,op-bf16-default,op-f16-persistent,op-f16-default
base="--no-loop --loss sum --input-grad --reps 10 --warmup 10 --api direct"
row() { grep -E "^\| (Lstm|Gru) " "$1" | cut -d'|' -f7,8,9 | tr -s ' ' | sed 's/^ //' | paste -sd';' ; }
for shape in 3,32,30,512 3,32,30,256 4,32,30,256 3,20,35,200 4,20,35,200 3,8,30,512 3,32,200,512 3,32,30,1024; do
  IFS=, read -r L B T H <<< "$shape"
  for mode in ${3:-lstm gru}; do
    n=${mode}_${shape//,/x}
    "$D/bench_grid" $base --graph --mode $mode --shape $shape --variants $vars > "$OUT/g_$n.log" 2>&1
    CANDLE_RNN_PERSISTENT_WAVE=0 "$D/bench_grid" $base --graph --mode $mode --shape $shape \
      --variants op-bf16-persistent > "$OUT/g0_$n.log" 2>&1
    "$D/bench_grid" $base --mode $mode --shape $shape --variants $vars > "$OUT/e_$n.log" 2>&1
    for g in --graph ""; do
      /opt/torch/.venv/bin/python scripts/torch_reference.py --grid $g --loss sum --input-grad \
        --impls torch-fp16 --reps 10 --only $mode,$L,$B,$T,$H > "$OUT/t${g:+g}_$n.log" 2>&1
    done
    t() { grep -E "^\| $mode " "$1" | head -1 | cut -d'|' -f8,9 | tr -s ' '; }
    echo "$mode $shape"
    echo "  graphed: $(row "$OUT/g_$n.log"); layer by layer: $(row "$OUT/g0_$n.log" | cut -d'|' -f2,3); torch fp16:$(t "$OUT/tg_$n.log")"
    echo "  eager:   $(row "$OUT/e_$n.log"); torch fp16:$(t "$OUT/t_$n.log")"
  done
done
(cd "$OUT" && tar -czf sweep-${3:-all}.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
