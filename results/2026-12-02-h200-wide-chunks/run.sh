#!/usr/bin/env bash
# On the GPU, from the repository root, with D (scripts/devbin.sh's binaries; D/cupti holding
# ../2026-11-26-h200-graph-kernels/'s CUPTI injection library and libcupti.so.13.xz) and OUT set.
# Parts:
# - `next`: ../2026-12-02-h200-wide-backward/next.sh (OUT/next.txt, OUT/plans-1024.txt);
# - `trace`: every node of replayed graphed f16 training calls with dx (`--api direct`) at
#   TRACE_SPECS (CELL:L,B,T,H ...), the wide backward's rule, then forced off, then on in chunks
#   of 32 (OUT/trace.log).
# - `ab`: graphed f16 training with dx (`--api direct`), µs an example, at AB_SPECS
#   (CELL:L,B,T,H ...): D's default / wide forced on / on in chunks of 32 / off / OLD's default
#   (OLD: the build before, D's default unless set) / D's default (OUT/ab.txt);
# - `tests`: the wide backward's GPU test with its plans (OUT/tests-wide.log);
# - `sanitize`: compute-sanitizer's memcheck, racecheck and synccheck on f16 training at
#   SAN_SPECS (OUT/sanitize.log, OUT/sanitize.tgz; the first run's shapes: lstm:1,16,3,1024
#   lstm:1,8,3,512 gru:1,32,3,1024 with CANDLE_RNN_PERSISTENT_WIDE_BACKWARD=1).
# - `rule`: graphed f16 training with dx, µs an example, at RULE_SPECS: D's default /
#   CANDLE_RNN_PERSISTENT_CHUNK=64 / =32 / the wide backward off / OLD's default / D's default
#   (OUT/rule.txt);
# - `buffers`: the same at BUFFER_SPECS: D's default / CANDLE_RNN_PERSISTENT_WIDE_BUFFERS=2, 3, 4 /
#   D's default (OUT/buffers.txt);
# - `tests3`: with CANDLE_RNN_PERSISTENT_WIDE_BUFFERS=3 (the rule that followed), the wide
#   backward's GPU test (OUT/tests-wide3.log) and compute-sanitizer at LSTM [3, 16, 512] and GRU
#   [3, 32, 512] (OUT/sanitize.log; run as separate commands that day, the device's time short);
# - `tests-gru`: the op's GPU tests of GRUs, one-cluster layers, the default's rules and dropout
#   on our kernels (OUT/tests-gru.log);
# - `check`: gpu_check --persistent in f16 and bf16 at once (OUT/gpu_check-*.log);
# - `grid`: the half grid through the sink and through `loss.backward()` (OUT/grid-direct/,
#   OUT/grid-plain/).
#   D=.devbin-f OUT=... results/2026-12-02-h200-wide-chunks/run.sh next trace
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
source scripts/on-gpu.sh
W=CANDLE_RNN_PERSISTENT_WIDE_BACKWARD
if [ -n "${OLD:-}" ] && [ ! -x "$OLD/bench_grid" ]; then xz -dk "$OLD/bench_grid.xz" && chmod +x "$OLD/bench_grid"; fi
# One line per CELL:L,B,T,H of SPECS ($1): graphed f16 training with dx, µs an example, for each
# pair of LABEL and SETTINGS after it (VAR=VALUE ..., X=1 for none; OLD: OLD's build's default).
rows() {
  local spec label set line i
  local -a pairs=("${@:2}")
  for spec in $1; do
    graph=--graph v=op-f16-default
    split_spec "$v:$spec"
    line="$c $sh"
    for ((i = 0; i < ${#pairs[@]}; i += 2)); do
      label=${pairs[i]} set=${pairs[i + 1]}
      if [ "$set" = OLD ]; then
        line+=" | $label $(PHASE=train BENCH_GRID=${OLD:-$D}/bench_grid bench_with X=1)"
      else
        # shellcheck disable=SC2086
        line+=" | $label $(PHASE=train bench_with $set)"
      fi
    done
    echo "$line"
  done 2>&1
}
for part in "$@"; do
  case $part in
    next)
      stamp next
      bash "$here/../2026-12-02-h200-wide-backward/next.sh"
      ;;
    trace)
      stamp trace
      [ -f "$bin/cupti/libcupti.so.13" ] || xz -dk "$bin/cupti/libcupti.so.13.xz"
      analyze=$here/../2026-11-26-h200-graph-kernels/analyze.py
      for spec in ${TRACE_SPECS:-lstm:1,32,30,1024 lstm:1,32,30,512}; do
        cell=${spec%%:*} shape=${spec#*:}
        for set in X=1 $W=0 "$W=1 CANDLE_RNN_PERSISTENT_CHUNK=32"; do
          name=op_${cell}_${shape//,/_}
          env $set CUDA_INJECTION64_PATH=$bin/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv timeout 120 \
            "$D/bench_grid" --no-loop --graph --loss sum --input-grad --reps 20 --warmup 5 --api direct \
            --phase train --mode $cell --shape $shape --variants op-f16-default > "$OUT/$name.out" 2>&1
          echo "### $spec [$set] rc=$? $(grep -E '^\| (Lstm|Gru) ' "$OUT/$name.out" | cut -d'|' -f7,8 | tr '\n' ' ')"
          python3 "$analyze" "$OUT/$name.csv" 10
          rm -f "$OUT/$name.csv" "$OUT/$name.out"
        done
      done > "$OUT/trace.log" 2>&1
      grep -E "^(###|graph)" "$OUT/trace.log"
      ;;
    ab)
      stamp ab
      rows "${AB_SPECS:-lstm:1,32,30,1024 lstm:1,32,30,512 gru:1,32,30,512 gru:1,32,30,1024 gru:1,128,30,512}" \
        default X=1 wide $W=1 "wide ch32" "$W=1 CANDLE_RNN_PERSISTENT_CHUNK=32" off $W=0 old OLD default X=1 \
        | tee "$OUT/ab.txt"
      ;;
    rule)
      stamp rule
      rows "${RULE_SPECS:-gru:1,128,30,512 gru:1,128,200,512 gru:3,128,30,512 gru:3,128,200,512 gru:1,64,30,512 gru:1,256,30,512 gru:1,32,30,512 gru:1,32,200,512 gru:1,32,30,1024 lstm:1,32,30,512}" \
        default X=1 ch64 CANDLE_RNN_PERSISTENT_CHUNK=64 ch32 CANDLE_RNN_PERSISTENT_CHUNK=32 off $W=0 old OLD \
        default X=1 | tee "$OUT/rule.txt"
      ;;
    buffers)
      stamp buffers
      B=CANDLE_RNN_PERSISTENT_WIDE_BUFFERS
      rows "${BUFFER_SPECS:-lstm:1,32,30,512 lstm:1,32,200,512 gru:1,32,30,512 gru:1,128,30,512 gru:1,32,30,1024 lstm:3,128,30,512}" \
        default X=1 2 $B=2 3 $B=3 4 $B=4 default X=1 | tee "$OUT/buffers.txt"
      ;;
    tests3)
      stamp tests3
      export CANDLE_RNN_PERSISTENT_WIDE_BUFFERS=3
      TESTS_TIMEOUT=100 gpu_tests_as wide3 persistent_wide_backward
      SAN_TIMEOUT=60 sanitize_bench "lstm:1,16,3,512 gru:1,32,3,512" op-f16-default --input-grad
      unset CANDLE_RNN_PERSISTENT_WIDE_BUFFERS
      ;;
    tests-gru)
      stamp tests-gru
      TESTS_TIMEOUT=240 gpu_tests_as gru persistent_gru persistent_clusters_of_16 the_default_serves \
        dropout_gradients_use_the_forward_masks_on_the_persistent
      ;;
    check)
      stamp check
      gpu_check_half
      ;;
    grid)
      half_grid_apis
      ;;
    tests)
      stamp tests
      CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 gpu_tests_as wide persistent_wide_backward
      grep -h "train true" "$OUT/tests-wide.log" | grep -o "cell: [A-Za-z]*, hidden: [0-9]*, batch: [0-9]*\|buffers: [0-9]*\|chunk: [0-9]*\|groups: [0-9]*\|wide_backward: [a-z]*" \
        | paste -sd' ' | sed 's/ cell:/\ncell:/g' | sort | uniq | head -20
      ;;
    sanitize)
      stamp sanitize
      SAN_TIMEOUT=200 sanitize_bench "${SAN_SPECS:-gru:1,128,3,512 gru:1,16,3,512}" op-f16-default --input-grad
      ;;
  esac
done
