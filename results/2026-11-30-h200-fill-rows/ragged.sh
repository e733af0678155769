#!/usr/bin/env bash
# (Branch next/ragged-groups: prepared for the next GPU session, not yet run.) A ragged last
# batch group: [*, 128, 128] in 13 groups of 10 (the last of 8), whose 13 clusters of 8 blocks
# each get a multiprocessor per block, against the rule's 16 groups of 8, of which the GPU gives
# only 14 their own multiprocessors (results/2026-11-30-h200-launch-marks/ §3).
#   ragged.sh build DIR        (here) the lab harnesses, LSTM forward (folded) and backward, GRU
#                              forward, 30 steps, with -DLAB_MARKS
#   ragged.sh lab DIR          (GPU) each harness twice: µs a launch, each group's end
#   ragged.sh ab DIR OUT       (GPU) DIR's bench_grid with CANDLE_RNN_PERSISTENT_GROUPS=13 / rule /
#                              13, graphed then eager, LSTM and GRU [30, 128, 128] and [200, 128,
#                              128]
#   ragged.sh check DIR OUT    (GPU) gpu_check --persistent (LSTM, GRU) with the knob, against the
#                              f64 CPU path (batch 128 and 256 take ragged groups); and
#                              compute-sanitizer over training at [6, 128, 128] with it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
case $1 in
build)
  dir=$2
  b() { bash "$here/build.sh" "$dir" "$@" -DHID=128 -DUNITS=16 -DONE_CLUSTER=1 -DPUSH=1 -DCL=1 -DLAB_T=30 -DLAB_MARKS; }
  for g in "rule:-DGROUPS=16 -DBATCH=8" "ragged:-DGROUPS=13 -DBATCH=10 -DBROWS=128"; do
    name=${g%%:*} d=${g#*:}
    # shellcheck disable=SC2086
    { b fwd-$name -DXIN=128 $d; b bwd-$name -DNBUF=8 -DLAB_BWD $d; b gfwd-$name -DXIN=128 -DLAB_GRU $d; }
  done
  ;;
lab)
  dir=$2
  for name in fwd-rule fwd-ragged bwd-rule bwd-ragged gfwd-rule gfwd-ragged; do
    for round in 1 2; do
      echo "== $name"
      timeout 30 "$dir/lab-$name" 30 2>&1 | grep -vE 'output mean'
    done
  done
  ;;
ab | check)
  D=$2 OUT=$3
  cd "$here/../.."
  source scripts/on-gpu.sh
  row() {
    env "$@" timeout 120 "$D/bench_grid" --no-loop $graph --loss sum --input-grad --reps 10 --warmup 5 \
      --api direct --mode $c --shape $sh --variants op-bf16-default 2>>"$OUT/stderr.txt" \
      | grep -E '^\| (Lstm|Gru) ' | awk -F'|' '{t=$8; f=$9; gsub(/ /,"",t); gsub(/ /,"",f); printf "%s %s; ", t, f}'
  }
  if [ "$1" = ab ]; then
  for graph in --graph ""; do
    for spec in lstm:1,128,30,128 gru:1,128,30,128 lstm:1,128,200,128 gru:1,128,200,128; do
      c=${spec%%:*} sh=${spec#*:}
      echo "${graph:-eager} $c $sh | 13 $(row CANDLE_RNN_PERSISTENT_GROUPS=13) | rule $(row X=1) | 13 $(row CANDLE_RNN_PERSISTENT_GROUPS=13)"
    done
  done 2>&1 | tee "$OUT/ragged-op.log"
  for g in 13 ""; do
    CANDLE_RNN_PERSISTENT_GROUPS=$g CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 60 "$D/bench_grid" --no-loop \
      --loss sum --input-grad --reps 1 --warmup 0 --mode lstm --shape 1,128,30,128 \
      --variants op-bf16-default 2>&1 | grep "candle-cudnn-rnn:" | sed "s/^/GROUPS=${g:-rule} /"
  done > "$OUT/ragged-plans.txt"
  exit 0
  fi
  for m in lstm gru; do
    CANDLE_RNN_PERSISTENT_GROUPS=13 timeout 420 "$D/gpu_check" --persistent --mode $m --seed 2711 \
      > "$OUT/gpu_check-ragged-$m.log" 2>&1 &
  done
  wait
  for m in lstm gru; do
    echo "gpu_check $m: $(tail -1 "$OUT/gpu_check-ragged-$m.log"), $(grep -c '| ok |' "$OUT/gpu_check-ragged-$m.log") ok"
  done
  for c in lstm gru; do
    for tool in memcheck racecheck synccheck; do
      log="$OUT/cs-$tool-$c.log"
      CANDLE_RNN_PERSISTENT_GROUPS=13 CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 120 "$CS" --tool $tool \
        --print-limit 20 "$D/bench_grid" --no-loop --loss sum --input-grad --api direct --reps 1 \
        --warmup 0 --phase train --mode $c --shape 1,128,6,128 --variants op-bf16-persistent > "$log" 2>&1
      echo "$tool $c rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//')"
    done
  done 2>&1 | tee "$OUT/ragged-sanitize.log"
  ;;
esac
