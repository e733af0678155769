#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR --old b846654 (the revision before the
# restructure): the GPU tests, gpu_check --persistent, PTB large bf16's first epoch old and new
# (the same lines bit for bit) and its step time old / new / old, and resumes from inside an
# epoch (a stop as Ctrl-C makes it) against straight runs: large bf16 (persistent kernels),
# medium tf32 (cuDNN's dropout states), medium f16 (loss scaling).
#   results/2026-11-25-h100-newcomer/go.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
source "$D/gpu-env.sh" > "$OUT/env.txt" 2>&1
for f in "$D"/*.xz; do [ -x "${f%.xz}" ] || { xz -dkf -T8 "$f"; chmod +x "${f%.xz}"; }; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/smi.txt" 2>&1
stamp() { echo "[$(date +%T)] $*"; }
epochs() { grep -E "^Epoch|^Test" "$1" | sed -E 's/ wps: [0-9]+//'; }

T=/tmp/runs; rm -rf $T; mkdir -p $T
L="--config large --precision bf16"
stamp "PTB large bf16, epoch 1: old, new"
timeout 90 "$D/old-ptb-lm" train $L --epochs 1 --out $T/old > $T/old.log 2> $T/old.err
timeout 90 "$D/ptb-lm" train $L --epochs 1 --out $T/new > $T/new.log 2> $T/new.err
epochs $T/old.log > "$OUT/large-old.txt"; epochs $T/new.log > "$OUT/large-new.txt"
cat "$OUT/large-new.txt"
cmp -s "$OUT/large-old.txt" "$OUT/large-new.txt" && echo "large epoch 1: SAME" || { echo "large epoch 1: DIFFER"; cat "$OUT/large-old.txt"; }
head -2 $T/new.err | cut -c1-250

stamp "PTB large bf16 steps: old, new, old, new"
for b in old-ptb-lm ptb-lm old-ptb-lm ptb-lm; do
  echo -n "$b: "; timeout 60 "$D/$b" bench $L --data data/ptb --batches 100 --warmup 20 2>&1 >/dev/null | tail -1 | cut -c1-200
done | tee "$OUT/large-steps.txt"

# Stopped inside epoch 1 (as Ctrl-C stops a run: --stop-after is the same path, at a known
# step), resumed, against the straight run: the same epoch lines.
resume_check() {  # name, flags...
  local name=$1; shift
  timeout 90 "$D/ptb-lm" train "$@" --epochs 1 --out $T/$name-straight > $T/$name-straight.log 2> $T/$name-straight.err
  timeout 90 "$D/ptb-lm" train "$@" --epochs 1 --out $T/$name-stop --stop-after 100 > /dev/null 2> $T/$name-stop.err
  echo "$name stop rc=$? $(tail -1 $T/$name-stop.err | cut -c1-160)"
  timeout 90 "$D/ptb-lm" train "$@" --epochs 1 --out $T/$name-stop --resume > $T/$name-resumed.log 2> $T/$name-resumed.err
  epochs $T/$name-straight.log > "$OUT/$name-straight.txt"; epochs $T/$name-resumed.log > "$OUT/$name-resumed.txt"
  cat "$OUT/$name-straight.txt"
  cmp -s "$OUT/$name-straight.txt" "$OUT/$name-resumed.txt" && echo "$name resumed: SAME" || { echo "$name resumed: DIFFER"; cat "$OUT/$name-resumed.txt"; tail -3 $T/$name-resumed.err; }
}
stamp "resumes from inside an epoch"
resume_check large-bf16 $L
resume_check medium-tf32 --config medium --precision tf32 --max-batches 400
resume_check medium-f16 --config medium --precision f16 --max-batches 400
stamp "op GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 150 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/op-gpu-tests.log" 2>&1
echo "op-gpu-tests rc=$?"; grep -E "test result|FAILED|panicked" "$OUT/op-gpu-tests.log" | head -5
stamp "ptb-lm unit tests"
timeout 120 "$D/ptb-lm-tests" > "$OUT/ptb-lm-tests.log" 2>&1
echo "ptb-lm-tests rc=$?"; grep -E "test result|FAILED|panicked" "$OUT/ptb-lm-tests.log" | head -5
stamp "gpu_check --persistent"
timeout 200 "$D/gpu_check" --persistent > "$OUT/gpu_check_persistent.log" 2>&1
echo "gpu_check rc=$? ok $(grep -c '| ok |' "$OUT/gpu_check_persistent.log") failed $(grep -c '| FAIL' "$OUT/gpu_check_persistent.log")"
grep -E "\| FAIL|panick|^Error" "$OUT/gpu_check_persistent.log" | head -5 | cut -c1-300

stamp "done"
