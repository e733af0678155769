#!/usr/bin/env bash
# On the GPU machine: a single layer in one thread-block cluster of 16 blocks (the non-portable
# size) against 8 and against the grid barrier, beside the op's default and PyTorch's fp16 module.
# Graphed training and graphed forward, µs an example, bf16 on the crate's kernels:
#   grid    CANDLE_RNN_PERSISTENT_ONE_CLUSTER=0 (the grid-wide barrier)
#   one8    CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 (one cluster of up to 8 blocks, where it fits)
#   one16   ... and CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=16
#   default the op's default (bf16 and f16), whatever serves
#   torch   PyTorch's fp16 module
# in the order grid one8 one16 default torch one16 one8 grid.
#   results/2026-11-27-h100-one-cluster-16/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
how="--loss sum --input-grad --reps 10 --warmup 5"
ours() {  # env... -- variant cell shape: "train forward kernel"
  local envs=() ; while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" timeout 90 "$D/bench_grid" --no-loop --graph $how --api direct --mode $2 --shape $3 --variants $1 2>>"$OUT/stderr.txt" \
    | grep -E '^\| (Lstm|Gru) ' | awk -F'|' '{gsub(/ /,"",$8); gsub(/ /,"",$9); print $8, $9}'
}
stamp start
for s in ${SHAPES:-1,32,30,128 1,16,30,256 1,32,30,256 1,8,30,512 1,32,30,64 1,4,30,512}; do
  for cell in ${CELLS:-gru lstm}; do
    line="$cell [$s]"
    for who in grid one8 one16 default torch one16 one8 grid; do
      case $who in
        grid) v=$(ours CANDLE_RNN_PERSISTENT_ONE_CLUSTER=0 -- op-bf16-persistent $cell $s) ;;
        one8) v=$(ours CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 -- op-bf16-persistent $cell $s) ;;
        one16) v=$(ours CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=16 -- op-bf16-persistent $cell $s) ;;
        default) v="bf16 $(ours X=1 -- op-bf16-default $cell $s) f16 $(ours X=1 -- op-f16-default $cell $s)" ;;
        torch) v=$(timeout 100 python3 scripts/torch_reference.py --grid --graph $how --only $cell,$s --impls torch-fp16 2>&1 \
             | grep -iE "^\| *$cell" | head -1 | awk -F"|" "{print \$8, \$9}") ;;
      esac
      line="$line | $who $v"
    done
    echo "$line"
  done
done | tee "$OUT/table.txt"
stamp done
