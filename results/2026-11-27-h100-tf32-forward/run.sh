#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR: f32 inference with TF32 products on the
# crate's kernels. First the op's GPU tests (the new TF32 test among them), then graphed
# inference forwards, µs an example: ours (`op-tf32-persistent`), cuDNN's TF32 `Standard` and
# `PersistStaticSmallH`, ours again, then PyTorch's TF32 module (`torch-tf32`).
# Part `check`: gpu_check --persistent (its TF32 rows among them).
#   results/2026-11-27-h100-tf32-forward/run.sh DIR OUT [bench|check]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=${3:-bench}
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
if [ "$PART" = check ]; then
  stamp "gpu_check --persistent"
  timeout 320 "$D/gpu_check" --persistent --seed 2711 > "$OUT/gpu_check.log" 2>&1
  echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"
  grep -E '\| (FAIL|fail|false)' "$OUT/gpu_check.log" | head; grep tf32 "$OUT/gpu_check.log" | head -40
  stamp "the default's TF32 forwards (ours at batch 32, cuDNN at 128)"
  for s in 1,32,30,512 1,128,30,512; do
    echo "gru [$s] default $(timeout 60 "$D/bench_grid" --no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 \
      --api direct --mode gru --shape $s --variants op-tf32-default 2>>"$OUT/stderr.txt" \
      | grep -E '^\| Gru ' | awk -F'|' '{print $9}')"
  done | tee "$OUT/default.txt"
  exit 0
fi
stamp "GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 300 "$D/op-gpu-tests" --test-threads=1 --nocapture > "$OUT/tests.log" 2>&1
echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests.log" | head
grep -E "tf32 inference" "$OUT/tests.log" | head -12
how="--loss sum --input-grad --reps 10 --warmup 5 --api direct"
fwd() {  # cell shape variants -> one forward time per variant
  timeout 90 "$D/bench_grid" --no-loop --graph $how --mode $1 --shape $2 --variants $3 2>>"$OUT/stderr.txt" \
    | grep -E '^\| (Lstm|Gru) ' | awk -F'|' '{gsub(/ /,"",$9); printf "%s ", $9}'
}
stamp "graphed forwards: ours | Standard | SmallH | ours"
for s in ${SHAPES:-1,32,30,512 1,32,30,1024 1,32,30,256 1,8,30,512 1,128,30,512 1,32,30,128}; do
  for cell in gru lstm; do
    echo "$cell [$s] | $(fwd $cell $s op-tf32-persistent) | $(fwd $cell $s op-tf32-standard,op-tf32-static-small-h) | $(fwd $cell $s op-tf32-persistent)"
  done
done | tee "$OUT/table.txt"
stamp "PyTorch TF32, graphed forwards"
for s in ${SHAPES:-1,32,30,512 1,32,30,1024 1,32,30,256 1,8,30,512 1,128,30,512 1,32,30,128}; do
  for cell in gru lstm; do
    echo "torch $cell [$s] $(timeout 100 python3 scripts/torch_reference.py --grid --graph --loss sum --input-grad --reps 10 \
      --warmup 5 --only $cell,$s --impls torch-tf32 2>>"$OUT/stderr.txt" | grep -iE "^\| *$cell" | head -1 | awk -F'|' '{print $9}')"
  done
done | tee "$OUT/torch.txt"
stamp done
