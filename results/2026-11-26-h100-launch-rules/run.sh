#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at the rules for eager and graphed
# modules (`RnnConfig::launch`; bench_grid's `--graph` builds its modules `Launch::Graphed`),
# with DIR/old-bench_grid from 26e34e2 (before them): the op's GPU tests, then the default
# (op-bf16-default, op-f16-default) old against new on the shapes whose kernel changed, graphed
# (the device's time) and eager (as candle calls it, a synchronization per call), through
# `loss.backward()`, training | forward, µs an example, in the order old new new old.
#   results/2026-11-26-h100-launch-rules/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
# TESTS=only: the GPU tests alone; TESTS=0: the timings alone.
if [ "${TESTS:-1}" != 0 ]; then
  stamp "GPU tests"
  RNN_TEST_REQUIRE_GPU=1 timeout 420 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
  echo "gpu tests rc=$?: $(grep -E '^test result' "$OUT/gpu-tests.log")"
  grep -E "(GRU|LSTM).*(Eager|Graphed):|FAIL" "$OUT/gpu-tests.log" | head -20
fi
[ "${TESTS:-1}" = only ] && exit 0
how="--no-loop --loss sum --input-grad --reps 20 --warmup 10 --api plain"
rows() { grep -E '^\| (Lstm|Gru) ' "$1" | cut -d'|' -f7-9 | tr -s ' ' | sed 's/op-//g' | tr '\n' ';'; }
for shape in ${SHAPES:-1,128,30,512 1,128,30,256 3,128,30,512 3,128,200,512 1,96,30,512 2,64,35,650}; do
  for cell in lstm gru; do
    for g in graph eager; do
      flag=""; [ $g = graph ] && flag=--graph
      for b in old new new2 old2; do
        case $b in old*) bin=$D/old-bench_grid ;; *) bin=$D/bench_grid ;; esac
        f="$OUT/${cell}_${shape//,/x}_${g}_$b.log"
        "$bin" $how $flag --mode $cell --shape $shape --variants op-bf16-default,op-f16-default > "$f" 2>&1
        echo "$cell $shape $g $b: $(rows "$f")"
      done
    done
  done
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp done
