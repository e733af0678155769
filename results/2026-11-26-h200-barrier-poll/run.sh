#!/usr/bin/env bash
# On the GPU machine: DIR/main-bench_grid (main, 188a099: the barrier polls with acquire loads),
# DIR/bench_grid and op-gpu-tests (branch poll-relaxed: relaxed loads, then a fence),
# DIR/old-bench_grid (branch poll-sleep: the same with 20 ns sleeps between polls), built by
# `scripts/devbin.sh DIR --old poll-sleep` on poll-relaxed. bf16 on the crate's kernels,
# graphed, µs an example, train | forward, main / relaxed / sleep / sleep / relaxed / main; then
# the GPU tests of poll-relaxed.
#   results/2026-11-26-h200-barrier-poll/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
for f in "$D"/main-bench_grid.xz; do [ -x "${f%.xz}" ] || { xz -dkf "$f"; chmod +x "${f%.xz}"; }; done
stamp "graphed, µs an example, train | forward"
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --variants op-bf16-persistent"
for c in gru:1,32,30,512:direct lstm:1,32,30,512:direct gru:1,32,30,1024:direct lstm:1,32,30,1024:direct \
  gru:1,32,30,128:direct lstm:2,20,35,650:direct lstm:2,20,35,1500:sink-overwrite; do
  IFS=: read -r mode shape api <<< "$c"
  line=""
  for who in main relaxed sleep sleep relaxed main; do
    f="$OUT/t_${mode}_${shape//,/x}_$who.log"
    case $who in main) b=main-bench_grid ;; relaxed) b=bench_grid ;; sleep) b=old-bench_grid ;; esac
    "$D/$b" $how --api $api --mode $mode --shape $shape > "$f" 2>&1
    line="$line | $who $(grep -E '^\| (Lstm|Gru) ' "$f" | head -1 | cut -d'|' -f8,9 | tr -s ' ')"
  done
  echo "  $mode $shape$line"
done
stamp "op GPU tests (poll-relaxed)"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
