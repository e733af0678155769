#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR with DIR/cupti/libtrace_api.so
# (trace_api.c here, built like results/2026-11-26-h200-graph-kernels/'s tracer): the driver and
# runtime API calls of eager training calls, LSTM [30, 128, 3 x 512], the op's default in TF32
# and fp32 and cuDNN's standard in bf16 against PyTorch's TF32 module; each run twice, with 10
# and 30 timed repetitions, so that the difference is 20 calls' API work (a training call and a
# forward each: the benchmarks time both). Then the same in graphed calls (replays).
#   results/2026-11-26-h100-eager-host/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
lib=$PWD/$D/cupti/libtrace_api.so
shape=3,128,30,512
for graph in "" --graph; do
  g=${graph:+graphed}; g=${g:-eager}
  for reps in 10 30; do
    for v in op-tf32-default op-fp32-default op-bf16-standard; do
      stamp "$g $v reps $reps"
      CUDA_INJECTION64_PATH=$lib TRACE_OUT=$OUT/${g}_${v}_$reps.csv timeout 100 "$D/bench_grid" --no-loop $graph \
        --loss sum --input-grad --reps $reps --warmup 3 --api direct --mode lstm --shape $shape --variants $v \
        > "$OUT/${g}_${v}_$reps.log" 2>&1
      grep -E '^\| Lstm' "$OUT/${g}_${v}_$reps.log"
    done
    stamp "$g torch-tf32 reps $reps"
    CUDA_INJECTION64_PATH=$lib TRACE_OUT=$OUT/${g}_torch-tf32_$reps.csv timeout 100 python3 scripts/torch_reference.py \
      --grid $graph --loss sum --input-grad --reps $reps --warmup 3 --only lstm,$shape --impls torch-tf32 \
      > "$OUT/${g}_torch-tf32_$reps.log" 2>&1
    grep -E '^\| lstm' "$OUT/${g}_torch-tf32_$reps.log"
  done
done
python3 "$here/diff.py" "$OUT" | tee "$OUT/diff.txt"
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude diff.txt ./* && find . -type f ! -name all.tgz ! -name diff.txt -delete)
stamp done
