#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old f7409c1` (new: 26e34e2, one
# layer's training up to batch 64 on ours): the op's default, old / new / new / old, graphed,
# `loss.backward()`, training | forward, µs an example (the kernel that served in each row);
# then the op's GPU tests.
#   results/2026-11-26-h100-batch64-single/run2.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --api plain"
row() { grep -E '^\| (Lstm|Gru) ' "$1" | tail -1 | cut -d'|' -f7-9 | tr -s ' ' | sed 's/op-//'; }
for spec in lstm:1,64,30,512:bf16 gru:1,64,30,512:f16 lstm:1,48,30,512:bf16 lstm:1,64,35,650:f16 gru:1,64,200,512:bf16 \
  lstm:1,64,30,128:f16 lstm:1,128,30,512:bf16; do
  IFS=: read -r cell shape prec <<< "$spec"
  line=""
  for who in old new new old; do
    bin=$D/bench_grid; [ $who = old ] && bin=$D/old-bench_grid
    f="$OUT/${cell}_${shape//,/x}_${prec}_$who.log"
    "$bin" $how --mode $cell --shape $shape --variants op-$prec-default >> "$f" 2>&1
    line="$line |$who $(row "$f")"
  done
  echo "$cell $shape$line"
done
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
