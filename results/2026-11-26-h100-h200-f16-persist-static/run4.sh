#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old 9dc4242` (new: f7409c1, the rules
# of this folder): the op's default in f16 (op-f16-default) old / new / new / old on the shapes
# whose choice changed and a few that keep theirs, graphed, `loss.backward()`, training |
# forward, µs an example (the kernel that served each in the logs); then the op's GPU tests.
#   results/2026-11-26-h100-h200-f16-persist-static/run4.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --api plain --variants op-f16-default"
row() { grep -E '^\| (Lstm|Gru) ' "$1" | tail -1 | cut -d'|' -f7-9 | tr -s ' ' | sed 's/op-f16-default//'; }
for spec in lstm:1,20,30,512 lstm:1,12,30,512 lstm:1,20,30,1024 lstm:2,20,35,512 lstm:1,20,35,128 lstm:1,32,30,512 \
  lstm:1,32,200,512 lstm:2,32,30,512 lstm:1,24,30,256 lstm:1,16,30,512 lstm:1,32,30,1024 lstm:2,32,30,1024 \
  lstm:1,32,30,128 gru:1,20,30,128; do
  IFS=: read -r cell shape <<< "$spec"
  line=""
  for who in old new new old; do
    bin=$D/bench_grid; [ $who = old ] && bin=$D/old-bench_grid
    f="$OUT/${cell}_${shape//,/x}_$who.log"
    "$bin" $how --mode $cell --shape $shape >> "$f" 2>&1
    line="$line |$who $(row "$f")"
  done
  echo "$cell $shape$line"
done
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
