#!/usr/bin/env bash
# issue 14: pool retention and weight-grad sink A/B on the grid's losing shapes, PyTorch in the same command
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
xz -dkf -T8 .devbin/bench_grid.xz; chmod +x .devbin/bench_grid
G=.devbin/bench_grid
SHAPES="lstm:3,128,200,1024 lstm:2,20,35,1500 lstm:1,128,30,1024 gru:1,128,30,1024 gru:3,128,200,1024 gru:2,20,35,1500 gru:1,32,30,128 lstm:3,128,30,1024"
op() { # tag flags...
  tag=$1; shift
  for s in $SHAPES; do m=${s%%:*}; sh=${s#*:}
    $G --no-loop --mode $m --shape $sh --variants op-fp32,op-tf32,op-bf16 --warmup 10 --reps 10 "$@" --json $OUT/op_${tag}_${m}_${sh//,/x}.json >> $OUT/op_$tag.log 2>&1
  done; echo "op $tag done $(date +%T)"; }
torchp() {
  args=""; for s in $SHAPES; do args="$args --only ${s/:/,}"; done
  python3 scripts/torch_reference.py --grid $args --impls torch-fp32,torch-tf32,torch-amp-bf16 --warmup 10 --reps 10 --json $OUT/torch_$1.json > $OUT/torch_$1.log 2>&1
  echo "torch $1 done $(date +%T)"; }
date +%T
op release --release-memory
op keep
op sink --sink
torchp a
torchp b
op sink2 --sink
op keep2
op release2 --release-memory
