#!/usr/bin/env bash
# On the GPU machine, a training call whose passes both push (one cluster a batch group, h and
# dh pushed into the cluster's shared memory) without its exchange buffer's fill: the graph's
# memset node before the forward (about 1.25 µs a call; results/2026-11-30-h200-call-trace/)
# is gone, and the backward zeroes the words that join its batch groups where it reads them
# (batch groups whose bias gradients the kernel adds: without side streams). DIR built as
# `scripts/devbin.sh DIR --old REV` builds it (REV: main before the change):
#   1. (tests) the op's whole GPU suite (OUT/tests.log).
#   2. (sanitize) compute-sanitizer initcheck, memcheck, racecheck and synccheck on a training
#      call of LSTM [1, 128, 3, 128] and GRU [1, 32, 3, 128] (both pushed; side streams, so the
#      groups' bias parts are added after the kernel) and of LSTM [1, 32, 3, 256] (pushed,
#      4 groups, no side streams: the joining words filled), by default; then initcheck and
#      memcheck on the two LSTMs with CANDLE_RNN_PERSISTENT_SIDE_STREAMS=0 (16 runs in all;
#      OUT/sanitize-*.log, OUT/sanitize-*.tgz).
#   3. (bench) graphed and eager training with the input's gradient and the forward, µs an
#      example, bf16, at [30, 128, 128], [30, 32, 128], [30, 32, 64] and [30, 32, 256], LSTM and
#      GRU: the build before / this one / before / this one, through the direct call and through
#      `loss.backward()` (bench_grid --api plain) into OUT/bench.log; then each training call's
#      graph nodes at LSTM [30, 128, 128] and [30, 32, 256].
#   4. (recheck) the second build's, where a backward's groups that join at words keep the
#      forward's fill: graphed old / new / old / new through both APIs at the same shapes, eager
#      at [30, 32, 256], each training call's graph nodes at three shapes and cells, and
#      initcheck at the three sanitized shapes (OUT/recheck.log; the initcheck logs in
#      OUT/sanitize.tgz).
#   5. (pytorch) the op's bf16 and f16 defaults (and bf16 through `loss.backward()`) / PyTorch's
#      fp16 module / the op again, graphed and eager, at LSTM and GRU [30, 128, 128] and
#      [30, 32, 128] (OUT/pytorch.log; PyTorch's rows in OUT/torch*.log).
#   results/2026-12-01-h200-unzeroed-exchange/run.sh DIR OUT [tests|sanitize|bench|recheck|pytorch]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-tests}
source scripts/on-gpu.sh
old="$bin/old-bench_grid"
# One line: the label $1, then bench_with's row by the build before / this one / before / this
# one, at `c`, `sh`, `graph` and API (direct unless set).
old_new() {
  echo "$1 | old $(BENCH_GRID=$old bench_with X=1) | new $(bench_with X=1)" \
    "| old $(BENCH_GRID=$old bench_with X=1) | new $(bench_with X=1)"
}
# The graphed training call's nodes of each build at the cells $1 and shapes $2 (L,B,T,H).
nodes() {
  local b exe c sh
  for b in old new; do
    exe="$D/bench_grid"; [ $b = old ] && exe=$old
    for sh in $2; do
      for c in $1; do
        echo "$b $c $sh: $(timeout 60 "$exe" --no-loop --graph --loss sum --input-grad --reps 1 \
          --warmup 0 --api direct --mode $c --shape $sh --variants op-bf16-default 2>&1 \
          | grep 'graph nodes' | head -1)"
      done
    done
  done
}
shapes="1,128,30,128 1,32,30,128 1,32,30,64 1,32,30,256"
for part in $parts; do
  case $part in
    tests)
      stamp "tests"
      gpu_tests
      ;;
    sanitize)
      stamp "sanitize"
      for setting in X=1 CANDLE_RNN_PERSISTENT_SIDE_STREAMS=0; do
        specs="lstm:1,128,3,128 gru:1,32,3,128 lstm:1,32,3,256" tools="initcheck memcheck racecheck synccheck"
        # Without side streams only the words that join the groups change: the grouped shapes,
        # the tools that see memory.
        [ $setting = X=1 ] || { specs="lstm:1,128,3,128 lstm:1,32,3,256" tools="initcheck memcheck"; }
        (export $setting SAN_TOOLS="$tools"
         sanitize_bench "$specs" op-bf16-default --input-grad > /dev/null 2>&1)
        name=${setting%%=*}
        mv "$OUT/sanitize.log" "$OUT/sanitize-$name.log"
        mv "$OUT/sanitize.tgz" "$OUT/sanitize-$name.tgz"
        sed "s/^/$name /" "$OUT/sanitize-$name.log"
      done
      ;;
    bench)
      stamp "bench"
      for API in direct plain; do
        for graph in --graph ""; do
          for c in lstm gru; do
            for sh in $shapes; do old_new "${graph:-eager} $API $c $sh"; done
          done
        done
      done 2>&1 | tee "$OUT/bench.log"
      API=direct
      nodes lstm "1,128,30,128 1,32,30,256"
      ;;
    recheck)
      stamp "recheck"
      {
        graph=--graph
        for API in direct plain; do
          for c in lstm gru; do
            for sh in $shapes; do old_new "--graph $API $c $sh"; done
          done
        done
        graph="" API=direct sh=1,32,30,256
        for c in lstm gru; do old_new "eager direct $c $sh"; done
        nodes "lstm gru" "1,128,30,128 1,32,30,128 1,32,30,256"
        SAN_TOOLS=initcheck sanitize_bench "lstm:1,128,3,128 gru:1,32,3,128 lstm:1,32,3,256" \
          op-bf16-default --input-grad
      } 2>&1 | tee "$OUT/recheck.log"
      ;;
    pytorch)
      stamp "pytorch"
      specs="lstm:1,128,30,128 gru:1,128,30,128 lstm:1,32,30,128 gru:1,32,30,128"
      ours() {
        for graph in --graph ""; do
          for spec in $specs; do
            c=${spec%%:*} sh=${spec#*:}
            echo "${graph:-eager} ours $c $sh | $(bench_rows "$graph" $c $sh op-bf16-default,op-f16-default)" \
              "plain $(API=plain bench_rows "$graph" $c $sh op-bf16-default)"
          done
        done
      }
      { ours; torch_rows torch "${specs//:/,}"; ours; } 2>&1 | tee "$OUT/pytorch.log"
      ;;
  esac
done
stamp done
