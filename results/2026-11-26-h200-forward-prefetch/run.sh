#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR --old main` on branch fwd-prefetch (the
# persistent forward copies the next chunk's h into a second stage while it multiplies this
# one): the persistent GPU tests; compute-sanitizer over a forward and a training call of three
# chunks; then old / new / old / new, bf16 on the kernels (`op-bf16-persistent`) beside cuDNN's
# (`op-bf16-default`): eager forwards and graphed training calls at batches 128 and 256, and PTB
# large's shape (batches of one chunk must not slow down).
#   results/2026-11-26-h200-forward-prefetch/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "persistent GPU tests"
RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --nocapture --test-threads=1 persistent > "$OUT/op-gpu-tests.log" 2>&1
echo "op-gpu-tests rc=$? $(grep -E 'test result' "$OUT/op-gpu-tests.log" | tail -1)"
grep -E "FAILED|panicked|failed:|rror" "$OUT/op-gpu-tests.log" | head -8 | cut -c1-300
stamp "compute-sanitizer: [4, 77, 1 x 200] (three chunks), forward and training"
for cell in lstm gru; do for phase in forward train; do for tool in memcheck racecheck synccheck; do
  log="$OUT/cs-$tool-$cell-$phase.log"
  timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum --input-grad \
    --api direct --reps 1 --warmup 0 --phase $phase --mode $cell --shape 1,77,4,200 \
    --variants op-bf16-persistent > "$log" 2>&1
  echo "$tool $cell $phase rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//');" \
    "served by ours: $(grep -c '(Persistent)' "$log")"
done; done; done
stamp "old / new / old / new: eager forwards, then graphed training (µs an example: ours, cuDNN)"
S="1,128,30,128 1,128,30,512 1,128,30,1024 1,256,30,1024 3,128,30,1024"
for phase in forward train; do
  how="--phase forward" col=9; [ $phase = train ] && how="--graph --loss sum --input-grad --api direct" col=8
  for r in 1 2; do for b in old-bench_grid bench_grid; do for cell in lstm gru; do for s in $S; do
    echo -n "$phase $b.$r $cell $s: "
    # shellcheck disable=SC2086
    timeout 60 "$D/$b" --no-loop $how --reps 20 --warmup 5 --mode $cell --shape $s \
      --variants op-bf16-persistent,op-bf16-default --json "$OUT/${phase}_${b}_${r}_${cell}_$s.json" 2>&1 \
      | grep -E "^\| (Lstm|Gru)" | cut -d'|' -f7,$col | tr '\n' ' '
    echo
  done; done; done; done
done
stamp "PTB large's shape, graphed training: old, new, old, new"
for b in old-bench_grid bench_grid old-bench_grid bench_grid; do
  echo -n "$b: "; timeout 60 "$D/$b" --no-loop --graph --loss sum --input-grad --api direct --reps 20 --warmup 5 \
    --mode lstm --shape 2,20,35,1500 --variants op-bf16-persistent 2>&1 | tail -n 1 | cut -d'|' -f7-9
done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
