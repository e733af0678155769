#!/usr/bin/env bash
# On the GPU machine (run 2026-12-01, logs in logs/): ours' TF32 training at hidden 1024, batch
# 96-128, under other plans than the planner's. There `Standard` (what PyTorch's TF32 module runs)
# kept three layers' training: ours took 1.04-1.15x its time
# (`results/2026-12-01-h200-tf32-wide-rules/`, sweep2: LSTM [30, 128, 3 x 1024] 36.3 against 34.9 µs
# an example, GRU [200, 128, 3 x 1024] 204 against 177), on chunks of 64 in clusters of 2 that split
# K, 8 units a block (the plans in that folder's logs/before/sweep1-plans.txt). The grid's one shape
# over 1.0x in TF32 is GRU [200, 128, 3 x 1024] on `Standard`, both sides. DIR built as
# `scripts/devbin.sh DIR` builds it:
#   1. (knobs) graphed training with the input's gradient, µs an example, ours with the rules'
#      plan and with other batch groups, units a block, cluster sizes, multicast and backward
#      chunk columns, beside `Standard`, at LSTM and GRU [30, 128, 1024], [30, 96, 3 x 1024]
#      and [30, 128, 3 x 1024] (OUT/knobs.log, the plans in OUT/plans.txt).
#   2. (long) the best of `knobs` by hand at [200, 128, 3 x 1024]: KNOBS="VAR=V ..." (OUT/long.log).
#   3. (eager) ours beside the default launched eagerly (the TF32 rule does not tell launches
#      apart; eagerly `Standard` waits on the host's launches, and the grid's eager GRU
#      [200, 128, 3 x 1024] took 1.077x PyTorch's time on it) at [30, 96-128, 3 x 1024] and
#      [200, 128, 3 x 1024] (OUT/eager.log).
#   results/2026-12-01-h200-tf32-1024-tuning/run.sh DIR OUT [knobs|long|eager]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-knobs}
source scripts/on-gpu.sh
graph=--graph
for part in $parts; do
  case $part in
    knobs)
      stamp "knobs"
      for sh in 1,128,30,1024 3,96,30,1024 3,128,30,1024; do
        for c in lstm gru; do
          v=op-tf32-persistent
          CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 60 "$D/bench_grid" --no-loop --loss sum --input-grad \
            --reps 1 --warmup 0 --mode $c --shape $sh --variants $v > /dev/null 2>> "$OUT/plans.txt"
          echo "$c $sh | rules $(bench_with X=1) | groups 2 $(bench_with CANDLE_RNN_PERSISTENT_GROUPS=2)" \
            "| units 16 $(bench_with CANDLE_RNN_PERSISTENT_UNITS=16)" \
            "| units 8,16 $(bench_with CANDLE_RNN_PERSISTENT_UNITS=8,16)" \
            "| clusters 2,2 $(bench_with CANDLE_RNN_PERSISTENT_CLUSTER=2,2)" \
            "| clusters 1,4 $(bench_with CANDLE_RNN_PERSISTENT_CLUSTER=1,4)" \
            "| multicast 2 $(bench_with CANDLE_RNN_PERSISTENT_MULTICAST=2)" \
            "| chunk 32 $(bench_with CANDLE_RNN_PERSISTENT_CHUNK=32)" \
            "| rules $(bench_with X=1) | Standard $(v=op-tf32-standard bench_with X=1)"
        done
      done | tee "$OUT/knobs.log"
      ;;
    long)
      stamp "long"
      v=op-tf32-persistent sh=3,128,200,1024
      for c in lstm gru; do
        echo "$c $sh | rules $(bench_with X=1) | ${KNOBS:-none} $(bench_with ${KNOBS:-X=1})" \
          "| Standard $(v=op-tf32-standard bench_with X=1)"
      done | tee "$OUT/long.log"
      ;;
    eager)
      stamp "eager"
      specs=$(for c in lstm gru; do for sh in 3,96,30,1024 3,128,30,1024 3,128,200,1024; do
        echo "$c:$sh"; done; done)
      beside_default tf32 "$specs" "" | tee "$OUT/eager.log"
      ;;
  esac
done
