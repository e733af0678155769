#!/usr/bin/env bash
# On the GPU machine, bench_grid and gpu_check built from row-groups.patch (an experiment, not on
# main): the forward tile without clusters split along the gate rows as well as K
# (CANDLE_RNN_PERSISTENT_ROW_GROUPS=MG: MG row groups of 8 / MG warps each; 1 is main's tile),
# at 8 and 16 units a forward block (CANDLE_RNN_PERSISTENT_UNITS=F,B). Graphed training |
# forward, µs an example, bf16 on the crate's kernels through `candle_cudnn_rnn::backward`; the
# planner's row first and last. Then `gpu_check --persistent` with MG 4 everywhere it applies.
#   results/2026-11-26-h100-row-groups/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct"
row() { grep -E '^\| (Lstm|Gru) ' "$1" | head -1 | cut -d'|' -f8,9 | tr -s ' '; }
for c in lstm:1,32,30,1024 gru:1,32,30,1024 lstm:1,32,30,512 gru:1,32,30,512; do
  IFS=: read -r cell shape <<< "$c"
  stamp "$cell [$shape]"
  for cfg in rule 16,8:1 16,8:2 16,8:4 8,8:2 8,8:4 rule; do
    f="$OUT/${cell}_${shape//,/x}_${cfg//[,:]/-}.log"
    case $cfg in
      rule) timeout 60 "$D/bench_grid" $how --mode $cell --shape $shape --variants op-bf16-persistent > "$f" 2>&1 ;;
      *) CANDLE_RNN_PERSISTENT_UNITS=${cfg%%:*} CANDLE_RNN_PERSISTENT_ROW_GROUPS=${cfg##*:} timeout 60 \
           "$D/bench_grid" $how --mode $cell --shape $shape --variants op-bf16-persistent > "$f" 2>&1 ;;
    esac
    echo "  units,row groups $cfg: $(row "$f")"
  done
done | tee "$OUT/timings.txt"
stamp "gpu_check --persistent, row groups 4"
CANDLE_RNN_PERSISTENT_ROW_GROUPS=4 timeout 280 "$D/gpu_check" --persistent > "$OUT/persistent_mg4.log" 2>&1
echo "rc=$? ok $(grep -c '| ok |' "$OUT/persistent_mg4.log") failed $(grep -c '| FAIL' "$OUT/persistent_mg4.log")"
grep -E "\| FAIL|panick|^Error" "$OUT/persistent_mg4.log" | head -8 | cut -c1-300
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude timings.txt ./* && find . -type f ! -name '*.tgz' ! -name timings.txt -delete)
stamp done
