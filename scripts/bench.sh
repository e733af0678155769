#!/usr/bin/env bash
# Builds and runs the benchmarks on this machine's GPU: the op grid (bench_grid), PTB training
# throughput (ptb-lm bench, both kernels) and, when PyTorch is importable, PyTorch's side of both
# (scripts/torch_reference.py). Writes results/<date>-<gpu>/ and prints the markdown tables.
# Usage: scripts/bench.sh [--bin DIR] [--data DIR]
#   --bin DIR   prebuilt `bench_grid` and `ptb-lm` (e.g. on a machine without Rust)
#   --data DIR  PTB files (default data/ptb; random tokens when absent)
set -euo pipefail
bin="" data=data/ptb
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    *) echo "usage: $0 [--bin DIR] [--data DIR]" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  cargo build --release -p ptb-lm --features cuda
  cargo build --release -p candle-cudnn-rnn --features cuda --example bench_grid
  bin=target/release grid=target/release/examples/bench_grid
else
  grid=$bin/bench_grid
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | tr -c 'A-Za-z0-9\n' '-')
out=results/$(date +%F)-$gpu
mkdir -p "$out"
data_arg=()
[ -f "$data/ptb.train.txt" ] && data_arg=(--data "$data")

# The variants scripts/bench_table.py reads.
"$grid" --variants op-fp32,op-tf32,op-tf32-auto,op-bf16,op-bf16-auto --json "$out/grid_op.json"
for c in small medium large; do
  for p in fp32 tf32; do
    "$bin/ptb-lm" bench --config $c --precision $p "${data_arg[@]}" --json "$out/ptb_${c}_cudnn_$p.json"
  done
  "$bin/ptb-lm" bench --config $c --rnn candle-nn --batches 20 --warmup 3 "${data_arg[@]}" \
    --json "$out/ptb_${c}_candle-nn_fp32.json"
done
if python3 -c "import torch" 2>/dev/null; then
  python3 scripts/torch_reference.py --grid --ptb small --ptb medium --ptb large "${data_arg[@]}" --json "$out/torch.json"
fi
python3 scripts/bench_table.py "$out" | tee "$out/tables.md"
