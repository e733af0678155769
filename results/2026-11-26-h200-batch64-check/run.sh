#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at e363211 (the default takes ours for
# stacks they run as one wavefront up to batch 64): the op's GPU tests (the default's kernels,
# a GRU [3, 64, 2 x 200] among them), then the default bf16 and f16, graphed, µs an example,
# train | forward, where the rule now sends calls to ours and where it does not.
#   results/2026-11-26-h200-batch64-check/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
grep -E "FAILED|panicked" "$OUT/gpu-tests.log" | head -8 | cut -c1-300
stamp "the default, graphed"
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --api direct --variants op-bf16-default,op-f16-default"
for c in lstm:2,64,35,650 gru:2,48,35,650 lstm:3,64,30,256 lstm:3,64,30,512 lstm:2,128,30,512; do
  IFS=: read -r mode shape <<< "$c"
  f="$OUT/t_${mode}_${shape//,/x}.log"
  "$D/bench_grid" $how --mode $mode --shape $shape > "$f" 2>&1
  echo "  $mode $shape: $(grep -E '^\| (Lstm|Gru) ' "$f" | cut -d'|' -f7,8,9 | tr -s ' ' | paste -sd';')"
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
