#!/usr/bin/env bash
# A bidirectional layer's two recurrences side by side, the reverse one on a side stream
# (`persistent/units.rs`'s `side_by_side`), on the GPU. From the repository root, with D (its
# scripts/devbin.sh binaries) and OUT set; one command a part:
# - `check`: the op's bidirectional GPU tests side by side (the default) and one after the other
#   (`CANDLE_RNN_PERSISTENT_SIDE_BY_SIDE=0`) at once (OUT/tests-side.log, OUT/tests-turns.log),
#   beside compute-sanitizer memcheck, racecheck and synccheck on a training call with dx and a
#   forward (f16, `RnnAlgo::Persistent`): LSTM [3, 8, 5, 64] and GRU [1, 16, 4, 46] (padded rows);
# - `ab`: graphed training with dx and forwards, every layer bidirectional, µs an example: ours
#   side by side / one after the other / side by side, then the default, at each shape of SHAPES
#   (OUT/ab.txt; each plan in OUT/stderr.txt); then PyTorch's fp16 module at those shapes,
#   graphed (OUT/torch-graph.log);
# - `more`: side by side / one after the other / side by side at hidden 512 and batch 32 in
#   clusters of at most 8 blocks (`CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=8`: two directions'
#   clusters of 16 may not all fit at once), and eagerly and through `loss.backward()` at two
#   shapes that gained (OUT/more.txt);
# - `suite`: the op's whole GPU suite in three parts side by side (OUT/tests-K.log);
# - `grid`: the half grid with every layer bidirectional, the defaults against PyTorch's fp16
#   module through the sink (OUT/table.md, OUT/grid.tgz), within GRID_TIMEOUT seconds (250).
#   D=... OUT=... results/2026-12-02-h200-side-by-side/run.sh check
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
SHAPES=${SHAPES:-"lstm:1,32,30,128 gru:1,32,30,128 lstm:1,128,30,128 lstm:1,32,30,512
  gru:1,32,30,512 lstm:1,128,30,512 lstm:1,32,30,1024 lstm:1,128,30,1024 gru:1,128,30,1024
  lstm:3,128,30,512 lstm:2,20,35,1500"}
case $1 in
  check)
    stamp check
    (gpu_tests_as side persistent_bidirectional) &
    (CANDLE_RNN_PERSISTENT_SIDE_BY_SIDE=0 gpu_tests_as turns persistent_bidirectional) &
    (for phase in train forward; do
      sanitize_bench "lstm:3,8,5,64 gru:1,16,4,46" op-f16-persistent --phase $phase --input-grad \
        --bidirectional
    done > /dev/null) &
    wait
    cat "$OUT/sanitize.log"
    ;;
  ab)
    stamp ab
    export BENCH_ARGS=--bidirectional graph=--graph
    for spec in $SHAPES; do
      c=${spec%%:*} sh=${spec#*:}
      echo "== $c $sh" >> "$OUT/stderr.txt"
      v=op-f16-persistent
      row="$(bench_with CANDLE_RNN_PERSISTENT_SHOW_PLANS=1) / $(bench_with CANDLE_RNN_PERSISTENT_SIDE_BY_SIDE=0)"
      row="$row / $(bench_with X=1) | default $(v=op-f16-default bench_with X=1)"
      echo "$c $sh | $row"
    done | tee "$OUT/ab.txt"
    only=$(for spec in $SHAPES; do echo "--only ${spec/:/,}"; done)
    # shellcheck disable=SC2086
    timeout 150 python3 scripts/torch_reference.py --grid --graph --bidirectional \
      --impls torch-fp16 --loss sum --input-grad --reps 10 --warmup 5 $only \
      > "$OUT/torch-graph.log" 2>>"$OUT/stderr.txt"
    grep -iE "^\| (lstm|gru) " "$OUT/torch-graph.log"
    ;;
  more)
    stamp more
    export BENCH_ARGS=--bidirectional graph=--graph v=op-f16-persistent
    side_turns() {
      echo "$(bench_with "$@") / $(bench_with CANDLE_RNN_PERSISTENT_SIDE_BY_SIDE=0 "$@") / $(bench_with "$@")"
    }
    for spec in lstm:1,32,30,512 gru:1,32,30,512 lstm:1,32,30,256; do
      c=${spec%%:*} sh=${spec#*:}
      echo "clusters of 8 $c $sh | $(side_turns CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=8)"
      echo "the rule's $c $sh | $(side_turns X=1)"
    done | tee "$OUT/more.txt"
    for spec in lstm:1,32,30,128 lstm:3,128,30,512; do
      c=${spec%%:*} sh=${spec#*:}
      echo "eager $c $sh | $(graph= side_turns X=1)"
      echo "plain $c $sh | $(API=plain side_turns X=1)"
    done | tee -a "$OUT/more.txt"
    ;;
  suite)
    stamp suite
    for k in 1 2 3; do (gpu_tests_part $k 3) & done
    wait
    ;;
  grid)
    stamp grid
    export COMPARE_ARGS=--bidirectional
    half_grid "${GRID_TIMEOUT:-250}"
    ;;
esac
