#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old 188a099` on branch fwd-flags:
# the layer-by-layer forward waits on per-producer step flags (common.cuh's flags_publish,
# flags_wait) instead of the grid barrier's counter; old-bench_grid is main (188a099).
# 1. bf16 on the crate's kernels, graphed, µs an example, train | forward: old / new / new / old;
# 2. the op's GPU tests;
# 3. compute-sanitizer memcheck, synccheck, racecheck over LSTM and GRU bf16 training layer by
#    layer (CANDLE_RNN_PERSISTENT_WAVE=0): [1, 32, 6, 256], [2, 77, 4, 200] (two launches on
#    one set of flags, three chunks).
#   results/2026-11-26-h200-step-flags/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "graphed, µs an example, train | forward"
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --variants op-bf16-persistent"
for c in gru:1,32,30,512:direct lstm:1,32,30,512:direct gru:1,32,30,1024:direct lstm:1,32,30,1024:direct \
  gru:1,32,30,128:direct lstm:1,128,30,512:direct lstm:2,20,35,1500:sink-overwrite; do
  IFS=: read -r mode shape api <<< "$c"
  line=""
  for who in old new new old; do
    f="$OUT/t_${mode}_${shape//,/x}_$who.log"
    b=bench_grid; [ $who = old ] && b=old-bench_grid
    "$D/$b" $how --api $api --mode $mode --shape $shape > "$f" 2>&1
    line="$line | $who $(grep -E '^\| (Lstm|Gru) ' "$f" | head -1 | cut -d'|' -f8,9 | tr -s ' ')"
  done
  echo "  $mode $shape$line"
done
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
grep -E "FAILED|panicked" "$OUT/gpu-tests.log" | head -8 | cut -c1-300
stamp "compute-sanitizer"
for shape in 1,32,6,256 2,77,4,200; do for mode in lstm gru; do for tool in memcheck synccheck racecheck; do
  log="$OUT/cs-$tool-$mode-${shape//,/x}.log"
  CANDLE_RNN_PERSISTENT_WAVE=0 timeout 120 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum \
    --input-grad --api direct --reps 2 --warmup 0 --phase train --mode $mode --shape $shape \
    --variants op-bf16-persistent > "$log" 2>&1
  echo "$tool $mode $shape rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
done; done; done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
