#!/usr/bin/env bash
# On the GPU machine, after run.sh: DIR/bench_grid (one-cluster layers exchanging through
# distributed shared memory, and every recurrence's per-step inputs loaded a step ahead, behind
# the barrier's wait) against DIR/old-bench_grid (main at fddd5f2), graphed training | forward
# (run2-timing.log), then the checks (run2-checks.log):
# 1. small single layers at seq 30 in one cluster: old, new, new with the exchange in L2
#    (CANDLE_RNN_PERSISTENT_SMEM_EXCHANGE=0: the loads ahead alone); and on the grid barrier
#    (CANDLE_RNN_PERSISTENT_ONE_CLUSTER=0), old and new;
# 2. the op's defaults (bf16) on larger shapes, old / new / old / new;
# 3. (checks) the op's GPU tests, gpu_check --persistent with the defaults, compute-sanitizer
#    over GRU one-cluster calls and a wavefront.
#   results/2026-11-26-h200-h100-smem-exchange/run2.sh DIR OUT [timing|checks]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=${3:-timing}
source scripts/on-gpu.sh
row() { grep -E '^\| (Lstm|Gru) ' "$1" | head -1 | cut -d'|' -f8,9 | tr -d ' '; }
if [ "$PART" = timing ]; then
stamp "1. small layers, µs an example, train|forward: one cluster old, new, new-L2; grid barrier old, new"
how="--no-loop --graph --loss sum --input-grad --api direct --reps 10 --warmup 5 --variants op-bf16-persistent"
for cell in gru lstm; do
  for hb in 64,1 128,1 256,1 64,8 128,8 256,8 64,32 128,32 256,32; do
    h=${hb%,*} b=${hb#*,}
    line=""
    for who in old new newL2 gold gnew; do
      f="$OUT/s_${cell}_${b}_${h}_$who.log"
      case $who in
        old) CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 timeout 60 "$D/old-bench_grid" $how --mode $cell --shape 1,$b,30,$h > "$f" 2>&1 ;;
        new) CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 timeout 60 "$D/bench_grid" $how --mode $cell --shape 1,$b,30,$h > "$f" 2>&1 ;;
        newL2) CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 CANDLE_RNN_PERSISTENT_SMEM_EXCHANGE=0 timeout 60 "$D/bench_grid" $how --mode $cell --shape 1,$b,30,$h > "$f" 2>&1 ;;
        gold) CANDLE_RNN_PERSISTENT_ONE_CLUSTER=0 timeout 60 "$D/old-bench_grid" $how --mode $cell --shape 1,$b,30,$h > "$f" 2>&1 ;;
        gnew) CANDLE_RNN_PERSISTENT_ONE_CLUSTER=0 timeout 60 "$D/bench_grid" $how --mode $cell --shape 1,$b,30,$h > "$f" 2>&1 ;;
      esac
      line="$line $who $(row "$f")"
    done
    echo "  $cell [30, $b, $h]:$line"
  done
done
stamp "2. the defaults, bf16, µs an example, train|forward: old new old new"
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --variants op-bf16-default"
for c in gru:1,32,30,512:direct gru:1,32,30,1024:direct lstm:1,32,30,1024:direct gru:1,32,30,128:direct \
  lstm:2,20,35,1500:sink-overwrite lstm:2,20,35,650:direct gru:3,32,30,512:direct lstm:1,128,30,512:direct; do
  IFS=: read -r cell shape api <<< "$c"
  line=""
  for who in old new old new; do
    f="$OUT/d_${cell}_${shape}_$who.log"
    case $who in
      old) timeout 60 "$D/old-bench_grid" $how --api $api --mode $cell --shape $shape > "$f" 2>&1 ;;
      new) timeout 60 "$D/bench_grid" $how --api $api --mode $cell --shape $shape > "$f" 2>&1 ;;
    esac
    line="$line $who $(row "$f")"
  done
  echo "  $cell $shape $api:$line $(grep -E '^\| (Lstm|Gru) ' "$f" | head -1 | cut -d'|' -f7)"
done
else
stamp "3. op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
stamp "gpu_check --persistent, the defaults"
timeout 280 "$D/gpu_check" --persistent > "$OUT/persistent.log" 2>&1
echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent.log") failed $(grep -c '| FAIL' "$OUT/persistent.log")"
grep -E "\| FAIL|panick|^Error" "$OUT/persistent.log" | head -5 | cut -c1-300
stamp "compute-sanitizer"
for spec in gru:1:1,8,6,256 gru:1:1,3,4,64 lstm:0:2,8,6,256 gru:0:2,8,6,256; do
  IFS=: read -r cell one shape <<< "$spec"
  for tool in memcheck synccheck racecheck; do
    log="$OUT/cs-$tool-$cell-${shape//,/x}-$one.log"
    CANDLE_RNN_PERSISTENT_ONE_CLUSTER=$one timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum --input-grad \
      --api direct --reps 2 --warmup 0 --phase train --mode $cell --shape $shape \
      --variants op-bf16-persistent > "$log" 2>&1
    echo "$tool $cell $shape (one cluster $one) rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
  done
done
fi
(cd "$OUT" && tar -czf $PART.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
