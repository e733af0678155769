#!/usr/bin/env bash
# On the GPU machine, DIR/bench_grid (the grid barrier's counters behind an exchange buffer,
# zeroed once per call and set back to 0 by the last block out of each launch: no fill before
# each persistent launch) against DIR/old-bench_grid (86dc7a4: a fill before each launch):
# 1. the op's GPU tests and gpu_check --persistent (new binaries);
# 2. compute-sanitizer memcheck, synccheck, racecheck over training calls on the crate's
#    kernels: LSTM and GRU, two layers (LSTM: wavefront; GRU: layer by layer, two launches on one
#    barrier), one layer of three chunks, one layer in one cluster;
# 3. graphed training as the grid times it, old / new / new with CANDLE_RNN_PERSISTENT_PLAIN_LAUNCH=1
#    (an experiment: no cooperative attribute) in rotating order, bf16 on the crate's kernels;
# 4. the nodes of one replayed call, new and new-plain (results/2026-11-26-h200-graph-kernels/'s
#    tracer).
#   results/2026-11-26-h200-barrier-leave/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
stamp "gpu_check --persistent"
timeout 280 "$D/gpu_check" --persistent > "$OUT/persistent.log" 2>&1
echo "rc=$? $(tail -3 "$OUT/persistent.log" | tr '\n' ' ')"
stamp "compute-sanitizer"
for cell in lstm gru; do for shape in 2,8,6,256 1,77,4,200 1,8,6,256; do for tool in memcheck synccheck racecheck; do
  log="$OUT/cs-$tool-$cell-${shape//,/x}.log"
  timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum --input-grad \
    --api direct --reps 2 --warmup 0 --phase train --mode $cell --shape $shape \
    --variants op-bf16-persistent > "$log" 2>&1
  echo "$tool $cell $shape rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
done; done; done
stamp "graphed training, bf16, µs an example"
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --variants op-bf16-default"
for c in lstm:1,32,30,1024:direct gru:1,32,30,1024:direct lstm:1,32,30,512:direct gru:1,32,30,512:direct \
  lstm:2,20,35,1500:sink-overwrite lstm:1,8,30,256:direct; do
  IFS=: read -r cell shape api <<< "$c"
  line=""
  for who in old new plain plain new old; do
    f="$OUT/t_${cell}_${shape}_$who.log"
    case $who in
      old) "$D/old-bench_grid" $how --api $api --mode $cell --shape $shape > "$f" 2>&1 ;;
      new) "$D/bench_grid" $how --api $api --mode $cell --shape $shape > "$f" 2>&1 ;;
      plain) CANDLE_RNN_PERSISTENT_PLAIN_LAUNCH=1 "$D/bench_grid" $how --api $api --mode $cell --shape $shape > "$f" 2>&1 ;;
    esac
    line="$line $who $(grep -E '^\| (Lstm|Gru) ' "$f" | cut -d'|' -f7,8 | head -1 | sed 's/.*(\(.*\)) *| *\([0-9.]*\).*/\2 (\1)/')"
  done
  echo "  $cell $shape $api:$line"
done
for who in new plain; do
  name=trace_$who
  env $([ $who = plain ] && echo CANDLE_RNN_PERSISTENT_PLAIN_LAUNCH=1) CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so \
    TRACE_OUT=$OUT/$name.csv "$D/bench_grid" $how --api direct --mode lstm --shape 1,32,30,1024 > "$OUT/$name.log" 2>&1
  python3 results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/$name.csv" 5 > "$OUT/$name.txt"
  rm -f "$OUT/$name.csv"
  echo "$name:"; cut -c1-110 "$OUT/$name.txt"
done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
