#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` at 4d4cc70 (deeper stacks that run as
# one wavefront go to ours by default):
# 1. the op's GPU tests (the default's kernel per rule, among them a 3-layer GRU wavefront and
#    a 3-layer LSTM that does not fit as one);
# 2. wavefronts whose blocks take their units' gate math in two rounds (more units a block than
#    threads for them), which `wave.rs` never picks (no more rounds than layer by layer), forced
#    with CANDLE_RNN_PERSISTENT_WAVE=U0,U1 against the default (layer by layer where no
#    one-round wavefront fits), bf16 on the crate's kernels, graphed, µs an example,
#    train | forward, two passes each.
#   results/2026-11-26-h200-wave-rounds/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
grep -E "FAILED|panicked|served by" "$OUT/gpu-tests.log" | head -8 | cut -c1-300
stamp "wavefronts in two rounds, bf16 graphed, µs an example, train | forward"
how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 10 --api direct --variants op-bf16-persistent"
for c in lstm:3,32,30,512 gru:3,32,30,512 lstm:3,32,200,512 gru:3,32,200,512 lstm:4,32,30,512 gru:4,32,30,512 \
  lstm:2,20,35,650 gru:2,20,35,650; do
  IFS=: read -r mode shape <<< "$c"
  line=""
  for units in default 12,12 8,16 16,16 default 12,12 8,16 16,16; do
    f="$OUT/t_${mode}_${shape//,/x}_${units/,/x}.log"
    if [ $units = default ]; then
      "$D/bench_grid" $how --mode $mode --shape $shape > "$f" 2>&1
    else
      CANDLE_RNN_PERSISTENT_WAVE=$units "$D/bench_grid" $how --mode $mode --shape $shape > "$f" 2>&1
    fi
    line="$line | $units $(grep -E '^\| (Lstm|Gru) ' "$f" | head -1 | cut -d'|' -f8,9 | tr -s ' ')"
    grep -q '^Error' "$f" && line="$line (error: $(grep '^Error' "$f" | head -1 | cut -c1-80))"
  done
  echo "  $mode $shape$line"
done
(cd "$OUT" && tar -czf all.tgz --exclude '*.tgz' --exclude console.txt ./* && find . -type f ! -name '*.tgz' ! -name console.txt -delete)
stamp "done"
