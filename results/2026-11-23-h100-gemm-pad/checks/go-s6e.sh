#!/usr/bin/env bash
# Padded GEMM operands (persistent LSTM path, ptb-lm's softmax): checks, then A/B against the
# binaries of 46c336e (base-*). Build: .devbin/BUILD.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
for f in gpu_check bench_grid ptb-lm ptb_lm_tests base-ptb-lm base-bench_grid; do xz -dkf -T8 .devbin/$f.xz; chmod +x .devbin/$f; done
date +%T
timeout 200 .devbin/gpu_check --persistent > $OUT/persistent_check.log 2>&1; echo "check rc=$?"; grep -c "| ok |" $OUT/persistent_check.log; grep -iE "fail|error|all " $OUT/persistent_check.log | head -5; grep -E "I1500 H1500 bf16 training \(|H130 bf16 training \(|I100 H200 f16 training \(" $OUT/persistent_check.log | cut -c1-200
date +%T
timeout 200 .devbin/ptb_lm_tests > $OUT/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|FAILED|panicked" $OUT/unit.log | head -5
date +%T
S="--no-loop --mode lstm --shape 2,20,35,1500 --reps 20 --warmup 10 --variants op-bf16-persistent,op-f16-persistent"
for i in 1 2; do
  timeout 60 .devbin/bench_grid $S --json $OUT/grid_new_$i.json 2>&1 | grep -i lstm | sed "s/^/new$i /"
  timeout 60 .devbin/base-bench_grid $S --json $OUT/grid_base_$i.json 2>&1 | grep -i lstm | sed "s/^/base$i /"
done
date +%T
B="--batches 100 --warmup 20 --data data/ptb"
b() { local tag=$1 bin=$2; shift 2; timeout 80 .devbin/$bin bench $B "$@" --json $OUT/bench_$tag.json 2>&1 | grep -v '^{' | tail -n 1 | sed "s/^/$tag: /"; }
for i in 1 2; do
  b large_bf16_new_$i ptb-lm --config large --precision bf16
  b large_bf16_base_$i base-ptb-lm --config large --precision bf16
done
b large_f16_new ptb-lm --config large --precision f16
b large_f16_base base-ptb-lm --config large --precision f16
b medium_bf16_new ptb-lm --config medium --precision bf16
b medium_bf16_base base-ptb-lm --config medium --precision bf16
date +%T
line() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
A="--config large --precision bf16 --max-batches 60 --data data/ptb"
P=.devbin/ptb-lm
timeout 80 $P train $A --out /tmp/G --epochs 2 --max-epoch 1 > $OUT/bf16-g.log 2>&1
timeout 80 $P train $A --out /tmp/E --epochs 2 --max-epoch 1 --no-cuda-graph > $OUT/bf16-e.log 2>&1
timeout 80 $P train $A --out /tmp/R --epochs 1 --max-epoch 1 > $OUT/bf16-r1.log 2>&1
timeout 80 $P train $A --out /tmp/R --epochs 2 --max-epoch 1 --resume > $OUT/bf16-r2.log 2>&1
line $OUT/bf16-g.log > /tmp/g; line $OUT/bf16-e.log > /tmp/e; line $OUT/bf16-r1.log $OUT/bf16-r2.log > /tmp/r; cat /tmp/g
cmp -s /tmp/g /tmp/e && echo "bf16: graph = eager" || { echo "graph/eager DIFFER"; cat /tmp/e; }
cmp -s /tmp/g /tmp/r && echo "bf16: resumed = straight" || { echo "resume DIFFER"; cat /tmp/r; }
date +%T
