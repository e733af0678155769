#!/usr/bin/env bash
# On the GPU machine, DIR/bench_grid (one-cluster layers exchange each step's values through
# distributed shared memory) against DIR/old-bench_grid (main at fddd5f2: through L2):
# 1. the op's GPU tests; gpu_check --persistent with every layer that fits in one cluster (of 8
#    blocks, then of 16: CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=16) run in one;
# 2. compute-sanitizer memcheck, synccheck, racecheck over one-cluster training calls;
# 3. graphed training | forward, bf16 on the crate's kernels, µs an example: one cluster old,
#    new (8 blocks), new (16 blocks), and the grid barrier (no cluster), single layers at seq 30.
#   results/2026-11-26-h200-h100-smem-exchange/run.sh DIR OUT [checks|timing] (default both)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=${3:-both}
source scripts/on-gpu.sh
if [ "$PART" != timing ]; then
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
for blocks in 8 16; do
  stamp "gpu_check --persistent, one cluster wherever it fits, at most $blocks blocks"
  CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=$blocks \
    timeout 280 "$D/gpu_check" --persistent > "$OUT/persistent-$blocks.log" 2>&1
  echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent-$blocks.log") failed $(grep -c '| FAIL' "$OUT/persistent-$blocks.log")"
  grep -E "\| FAIL|panick|^Error" "$OUT/persistent-$blocks.log" | head -5 | cut -c1-300
done
stamp "compute-sanitizer, one cluster"
for cell in lstm gru; do for spec in 8:1,8,6,256 16:1,32,5,128 8:1,3,4,64; do for tool in memcheck synccheck racecheck; do
  blocks=${spec%%:*} shape=${spec#*:}
  log="$OUT/cs-$tool-$cell-${shape//,/x}-$blocks.log"
  CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=$blocks \
    timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum --input-grad \
    --api direct --reps 2 --warmup 0 --phase train --mode $cell --shape $shape \
    --variants op-bf16-persistent > "$log" 2>&1
  echo "$tool $cell $shape ($blocks) rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
done; done; done
fi
if [ "$PART" != checks ]; then
stamp "graphed training | forward, bf16, µs an example: old-one new-one new-one16 grid"
how="--no-loop --graph --loss sum --input-grad --api direct --reps 10 --warmup 5 --variants op-bf16-persistent"
for cell in gru lstm; do
  for h in 64 128 256; do
    for b in 1 8 32; do
      line=""
      for who in old new new16 grid; do
        f="$OUT/t_${cell}_${b}_${h}_$who.log"
        case $who in
          old) CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 timeout 60 "$D/old-bench_grid" $how --mode $cell --shape 1,$b,30,$h > "$f" 2>&1 ;;
          new) CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 timeout 60 "$D/bench_grid" $how --mode $cell --shape 1,$b,30,$h > "$f" 2>&1 ;;
          new16) CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=16 timeout 60 "$D/bench_grid" $how --mode $cell --shape 1,$b,30,$h > "$f" 2>&1 ;;
          grid) CANDLE_RNN_PERSISTENT_ONE_CLUSTER=0 timeout 60 "$D/bench_grid" $how --mode $cell --shape 1,$b,30,$h > "$f" 2>&1 ;;
        esac
        line="$line $who $(grep -E '^\| (Lstm|Gru) ' "$f" | head -1 | cut -d'|' -f8,9 | tr -d ' ')"
      done
      echo "  $cell [30, $b, $h]:$line"
    done
  done
done
fi
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
