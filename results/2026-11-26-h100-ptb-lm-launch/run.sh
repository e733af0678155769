#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at 6ee7d3f (ptb-lm's fused LSTM built
# `Launch::Graphed` where its steps replay CUDA graphs; untracked calls' final state a view of
# the op's output): ptb-lm's CUDA unit tests (graphed passes against eager ones among them),
# then a PTB small training run of 200 batches and its evaluation, graphed and eager.
#   results/2026-11-26-h100-ptb-lm-launch/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "ptb-lm unit tests"
timeout 200 "$D/ptb-lm-tests" > "$OUT/unit.log" 2>&1; echo "unit rc=$?: $(grep -E '^test result' "$OUT/unit.log")"
for g in graph eager; do
  flag=""; [ $g = eager ] && flag=--no-cuda-graph
  stamp "PTB small, $g"
  timeout 150 "$D/ptb-lm" train --config small --precision bf16 --rnn auto --max-batches 200 --epochs 1 \
    --out "$OUT/small-$g" $flag > "$OUT/small-$g.log" 2>&1; echo "train rc=$?"
  grep -iE "valid|test|words/s" "$OUT/small-$g.log" | tail -4
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./*.log && find . -type f -name '*.log' ! -name console.txt -delete)
stamp done
