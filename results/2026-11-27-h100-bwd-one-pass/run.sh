#!/usr/bin/env bash
# On the GPU machine: branch bwd-one-pass (the backward takes every chunk of the batch in one
# pass over the gate columns) against main. DIR holds binaries of scripts/devbin.sh at the
# branch with --old main (old-bench_grid is main's bench_grid).
#   tests: the op's GPU tests; gpu_check: gpu_check --persistent (training rows at batches 77, 128
#           and 256 among them);
#   bench: graphed training, µs an example, bf16 `Persistent`, old / new / old / new, at batches
#          of several chunks, then the default's pick (new).
#   results/2026-11-27-h100-bwd-one-pass/run.sh DIR OUT tests|gpu_check|bench
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
case $PART in
tests)
  stamp "GPU tests"
  # A fresh machine's first NVRTC builds take most of this (about 170 s in all).
  RNN_TEST_REQUIRE_GPU=1 timeout 330 "$D/op-gpu-tests" --test-threads=1 > "$OUT/tests.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests.log" | head
  ;;
gpu_check)
  stamp "gpu_check --persistent"
  timeout 560 "$D/gpu_check" --persistent --seed 2711 > "$OUT/gpu_check.log" 2>&1
  echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"
  grep -E '\| FAIL \|' "$OUT/gpu_check.log" | head
  ;;
bench)
  old=$D/old-bench_grid new=$D/bench_grid
  how="--no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct"
  one() {  # bench_grid cell shape variant -> "train forward"
    timeout 90 "$1" $how --mode $2 --shape $3 --variants $4 2>>"$OUT/stderr.txt" \
      | grep -E '^\| (Lstm|Gru) ' | awk -F'|' '{gsub(/ /,"",$8); gsub(/ /,"",$9); printf "%s %s", $8, $9}'
  }
  stamp "graphed training | forward, bf16 Persistent: old | new | old | new | new default"
  for s in 1,128,30,512 1,128,30,1024 1,64,30,512 1,77,30,200 1,128,30,128 1,256,30,512; do
    for cell in lstm gru; do
      echo "$cell [$s] | $(one $old $cell $s op-bf16-persistent) | $(one $new $cell $s op-bf16-persistent)" \
        "| $(one $old $cell $s op-bf16-persistent) | $(one $new $cell $s op-bf16-persistent)" \
        "| $(one $new $cell $s op-bf16-default)"
    done
  done | tee "$OUT/table.txt"
  ;;
esac
stamp done
