#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR`: the last percents of issue 33's GRU
# forwards at 2x PyTorch's ([30, 32, 512] and [30, 32, 1024]).
#   sweep:  f16 graphed training | forward (µs an example, bench_us) of SWEEP_SPECS
#           (CELL:L,B,T,H ...; default GRU [30, 32, 1024] and [30, 32, 512]) under each of
#           SWEEP_CONFIGS, in two rounds: a config is `rule` or `+`-joined settings of the tuning's
#           variables, m=N (CANDLE_RNN_PERSISTENT_MULTICAST), u=F/B (..._UNITS, forward/backward),
#           g=N (..._GROUPS), f=0|1 (..._FOLD), o=0|1 (..._ONE_CLUSTER).
#   ab:     f16 graphed training | forward of AB_SPECS (CELL:L,B,T,H ...) in two rounds of: the
#           bench_grid of DIR/old (main before this folder's changes), of DIR/mid where there is
#           one (a build between), DIR's, and DIR's with the inference's input projection in f32
#           (CANDLE_RNN_PERSISTENT_HALF_PROJECTION=0).
#   tests:  the op's GPU tests (on-gpu.sh's gpu_tests).
#   sanitize: compute-sanitizer (SANITIZE_TOOLS, default memcheck synccheck racecheck) over small
#           forwards and training calls on the crate's kernels (bf16) that take this folder's
#           paths: the first step without products (no h_0) behind a grid barrier, with the
#           multicast in clusters of 8 ([5, 8, 512]) and of 2 in batch groups ([5, 32, 512]), in
#           chunks ([4, 77, 200]) and as a wavefront ([6, 8, 2 x 256]); a GRU's inference with
#           its input projection in half elements (SANITIZE_CALLS, CELL:PHASE:L,B,T,H ..., narrows
#           them); into OUT/sanitize.tgz.
#   results/2026-11-29-h200-forward-2x/run.sh DIR OUT sweep|ab|tests|sanitize
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
case $PART in
sweep)
  configs=${SWEEP_CONFIGS:-rule m=1 m=2 m=8 u=16/8 u=16/8+m=8 u=16/8+m=4 g=1 g=2}
  for spec in ${SWEEP_SPECS:-gru:1,32,30,1024 gru:1,32,30,512}; do
    cell=${spec%%:*} shape=${spec#*:}
    for round in 1 2; do
      row="$cell $shape round $round"
      for cfg in $configs; do
        unset CANDLE_RNN_PERSISTENT_MULTICAST CANDLE_RNN_PERSISTENT_UNITS CANDLE_RNN_PERSISTENT_FOLD \
          CANDLE_RNN_PERSISTENT_ONE_CLUSTER
        groups=""
        for kv in ${cfg//+/ }; do
          case $kv in
            m=*) export CANDLE_RNN_PERSISTENT_MULTICAST=${kv#m=} ;;
            u=*) export CANDLE_RNN_PERSISTENT_UNITS=${kv#u=}; CANDLE_RNN_PERSISTENT_UNITS=${CANDLE_RNN_PERSISTENT_UNITS/\//,} ;;
            g=*) groups=${kv#g=} ;;
            f=*) export CANDLE_RNN_PERSISTENT_FOLD=${kv#f=} ;;
            o=*) export CANDLE_RNN_PERSISTENT_ONE_CLUSTER=${kv#o=} ;;
          esac
        done
        row="$row | $cfg: $(bench_us "$groups" $cell $shape op-f16-default)"
      done
      echo "$row"
    done
  done
  unset CANDLE_RNN_PERSISTENT_MULTICAST CANDLE_RNN_PERSISTENT_UNITS CANDLE_RNN_PERSISTENT_FOLD \
    CANDLE_RNN_PERSISTENT_ONE_CLUSTER
  ;;
ab)
  old=$D/old/bench_grid mid=$D/mid/bench_grid
  [ -x "$old" ] || xz -dkf "$old.xz"
  [ -x "$mid" ] || [ ! -f "$mid.xz" ] || xz -dkf "$mid.xz"
  for spec in ${AB_SPECS:-gru:1,32,30,1024 gru:1,32,30,512 lstm:1,32,30,1024 lstm:1,32,30,512}; do
    cell=${spec%%:*} shape=${spec#*:}
    row="$cell $shape"
    for round in 1 2; do
      row="$row | old $(BENCH_GRID=$old bench_us "" $cell $shape op-f16-default)"
      [ -x "$mid" ] && row="$row | mid $(BENCH_GRID=$mid bench_us "" $cell $shape op-f16-default)"
      row="$row | new $(bench_us "" $cell $shape op-f16-default)"
      row="$row | f32-xg $(CANDLE_RNN_PERSISTENT_HALF_PROJECTION=0 bench_us "" $cell $shape op-f16-default)"
    done
    echo "$row"
  done
  ;;
tests)
  stamp "GPU tests"; gpu_tests
  ;;
sanitize)
  how="--loss sum --input-grad --reps 1 --warmup 0 --api direct"
  for tool in ${SANITIZE_TOOLS:-memcheck synccheck racecheck}; do
    for call in ${SANITIZE_CALLS:-gru:forward:1,8,5,512 gru:train:1,8,5,512 gru:forward:1,32,5,512 \
      gru:train:1,32,5,512 gru:forward:1,77,4,200 gru:forward:2,8,6,256 lstm:forward:1,8,5,512 \
      lstm:forward:1,32,5,512 lstm:forward:2,8,6,256}; do
      IFS=: read -r cell phase shape <<< "$call"
      log="$OUT/cs-$tool-$cell-$phase-${shape//,/x}.log"
      timeout 90 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop $how --phase $phase \
        --mode $cell --shape $shape --variants op-bf16-persistent > "$log" 2>&1
      echo "$tool $cell $phase $shape rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
    done
  done
  (cd "$OUT" && tar -czf sanitize-$(echo ${SANITIZE_TOOLS:-all} | tr " " -).tgz cs-*.log && rm -f cs-*.log)
  ;;
esac
stamp done
