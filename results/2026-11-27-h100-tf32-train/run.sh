#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR at branch tf32-next: TF32 training on
# the crate's kernels (README.md: what ran).
#   checks: the TF32 GPU test, then all GPU tests, then gpu_check --persistent (its TF32 rows
#           train too, up to hidden 1024, whose forward splits K in pairs);
#   sanitize: memcheck, racecheck and synccheck on the TF32 GPU test;
#   bench: graphed training and forwards, µs an example, ours (`op-tf32-persistent`) / cuDNN's
#          TF32 `Standard` / ours, then PyTorch's TF32 module.
#   results/2026-11-27-h100-tf32-train/run.sh DIR OUT checks|gpu_check|sanitize|bench
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
case $PART in
checks)
  stamp "the TF32 GPU test"
  RNN_TEST_REQUIRE_GPU=1 timeout 120 "$D/op-gpu-tests" --test-threads=1 --nocapture persistent_tf32 > "$OUT/tf32.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAIL|tf32" "$OUT/tf32.log" | head -30
  stamp "GPU tests"
  RNN_TEST_REQUIRE_GPU=1 timeout 300 "$D/op-gpu-tests" --test-threads=1 > "$OUT/tests.log" 2>&1
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests.log" | head
  ;;
gpu_check)
  stamp "gpu_check --persistent"
  timeout 500 "$D/gpu_check" --persistent --seed 2711 > "$OUT/gpu_check.log" 2>&1
  echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"
  grep -E '\| FAIL \|' "$OUT/gpu_check.log" | head; grep tf32 "$OUT/gpu_check.log" | grep training | head -30
  ;;
sanitize)
  for tool in memcheck racecheck synccheck; do
    stamp "$tool"
    # racecheck needed about 190 s on a machine of the same session (the first try's 180 s
    # limit stopped it); each case prints its errors as it passes (--nocapture).
    RNN_TEST_REQUIRE_GPU=1 timeout 400 "$CS" --tool $tool "$D/op-gpu-tests" --test-threads=1 --nocapture persistent_tf32 \
      > "$OUT/sanitizer-$tool.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^test result" "$OUT/sanitizer-$tool.log"
  done
  ;;
bench)
  how="--loss sum --input-grad --reps 10 --warmup 5 --api direct"
  both() {  # cell shape variants -> "train forward" per variant
    timeout 90 "$D/bench_grid" --no-loop --graph $how --mode $1 --shape $2 --variants $3 2>>"$OUT/stderr.txt" \
      | grep -E '^\| (Lstm|Gru) ' | awk -F'|' '{gsub(/ /,"",$8); gsub(/ /,"",$9); printf "%s %s ", $8, $9}'
  }
  stamp "graphed training | forward: ours | Standard | ours"
  for s in 1,32,30,512 1,32,30,1024 1,32,30,256 1,128,30,512 1,32,30,128; do
    for cell in gru lstm; do
      echo "$cell [$s] | $(both $cell $s op-tf32-persistent) | $(both $cell $s op-tf32-standard) | $(both $cell $s op-tf32-persistent)"
    done
  done | tee "$OUT/table.txt"
  stamp "PyTorch TF32"
  for s in 1,32,30,512 1,32,30,1024 1,32,30,256 1,128,30,512 1,32,30,128; do
    for cell in gru lstm; do
      echo "torch $cell [$s] $(timeout 100 python3 scripts/torch_reference.py --grid --graph --loss sum --input-grad \
        --reps 10 --warmup 5 --only $cell,$s --impls torch-tf32 2>>"$OUT/stderr.txt" | grep -iE "^\| *$cell" | head -1 \
        | awk -F'|' '{print $8, $9}')"
    done
  done | tee "$OUT/torch.txt"
  ;;
esac
stamp done
