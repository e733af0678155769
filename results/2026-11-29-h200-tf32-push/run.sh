#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` (or of its bench_grid, gpu_check and
# op-gpu-tests alone): the one-cluster forward pushing h in f32 (TF32 products), as it does in
# half precision (README.md).
#   ab:       TF32 calls whose batch groups run in one cluster each, graphed training | forward
#             (µs an example) on ours with the forward pushed (the plan's default now) and not
#             (CANDLE_RNN_PERSISTENT_PUSH=0,1: the exchange through L2 behind the cluster's
#             barrier, as before), alternated twice, with the default (op-tf32-default, cuDNN's
#             `PersistStaticSmallH` for GRUs at hidden 128) beside (OUT/ab.log).
#   tests:    the op's GPU tests with TF32 cases (filter "tf32"; OUT/tests.log).
#   sanitize: compute-sanitizer memcheck, racecheck and synccheck over TF32 inference and
#             training calls whose forward is pushed (small shapes).
#   check:    gpu_check --persistent.
#   results/2026-11-29-h200-tf32-push/run.sh DIR OUT ab|tests|sanitize|check
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
how="--loss sum --input-grad --reps 10 --warmup 5"
case $PART in
ab)
  for spec in ${AB_SPECS:-lstm:1,32,30,128 gru:1,32,30,128 lstm:1,128,30,128 gru:1,128,30,128 lstm:1,8,30,256 \
    gru:1,32,200,128}; do
    IFS=: read -r c s <<< "$spec"
    row="$c $s | default $(bench_us "" $c $s op-tf32-default)"
    for round in 1 2; do
      row="$row | pushed $(bench_us "" $c $s op-tf32-persistent)"
      row="$row | barrier $(CANDLE_RNN_PERSISTENT_PUSH=0,1 bench_us "" $c $s op-tf32-persistent)"
    done
    echo "$row"
  done | tee "$OUT/ab.log"
  ;;
tests)
  gpu_tests tf32
  ;;
sanitize)
  # (cell:phase:L,B,T,H) one group of 8 at hidden 128; 4 groups of 8 (batch 32); 46 units at 5.
  for call in lstm:forward:1,8,5,128 lstm:train:1,32,4,128 gru:train:1,5,4,46; do
    IFS=: read -r cell phase shape <<< "$call"
    {
      for tool in memcheck racecheck synccheck; do
        log="$OUT/cs-$tool-$cell-$phase-${shape//,/x}.log"
        timeout 120 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop $how --reps 1 --warmup 0 \
          --api direct --phase $phase --mode $cell --shape $shape --variants op-tf32-persistent > "$log" 2>&1
        echo "$tool $cell $phase $shape rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
      done
    }
  done | tee "$OUT/sanitize.log"
  (cd "$OUT" && tar -czf sanitize.tgz cs-*.log && rm -f cs-*.log)
  ;;
check)
  gpu_check_persistent
  ;;
esac
stamp done
