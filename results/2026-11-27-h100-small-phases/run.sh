#!/usr/bin/env bash
# On the GPU machine (its nvcc builds scripts/persistent-lab's harness, no other binaries): where
# a small step's time goes. One LSTM layer's forward and backward recurrences on the grid
# barrier, timed, then with per-phase SM clocks (-DLAB_PHASES: each step's phases after phase
# 0, and the step's length in cycles and in the global timer's ns): hidden 128 at batch 32 (one
# group) and at batch 4 (a batch group of the rule's 8 at batch 32), hidden 256 at batch 8, and
# PTB large's shape for reference. results/2026-11-27-h100-small-profile/ found ours and
# cuDNN's persistent kernels at 1.8-2.4 µs a step at [30, 32, 128], and
# results/2026-11-27-h100-push/ that the exchange's L2 round trip is not most of it.
#   results/2026-11-27-h100-small-phases/run.sh OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
OUT=$1
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
lab=/tmp/lab
mkdir -p $lab
shapes=("h128b32:-DHID=128 -DBATCH=32 -DUNITS=8 -DNBUF=2" "h128b4:-DHID=128 -DBATCH=4 -DUNITS=8 -DNBUF=2"
  "h256b8:-DHID=256 -DBATCH=8 -DUNITS=8 -DNBUF=2" "ptb-large:")
for s in "${shapes[@]}"; do
  IFS=: read -r name defs <<< "$s"
  for pass in "fwd:" "bwd:-DLAB_BWD"; do
    IFS=: read -r p pdefs <<< "$pass"
    # PTB large's backward as the library plans it on an H100 (scripts/persistent-gpu.sh's lab).
    [ "$name/$p" = ptb-large/bwd ] && pdefs="$pdefs -DCL=4 -DUNITS=13 -DNBUF=2"
    for ph in "" "-DLAB_PHASES"; do
      tag=$name-$p${ph:+-ph}
      # shellcheck disable=SC2086
      PATH=$(dirname "$nvcc"):$PATH bash scripts/persistent-lab/build.sh $lab "$tag" $defs $pdefs $ph \
        > "$OUT/build-$tag.log" 2>&1 &
    done
  done
done
wait
for s in "${shapes[@]}"; do
  name=${s%%:*}
  for p in fwd bwd; do
    echo "== $name $p: $(timeout 30 $lab/lab-$name-$p 30 2>&1 | grep -vE "config|output mean" | tr '\n' ' ')"
    timeout 30 $lab/lab-$name-$p-ph 10 2>&1 | grep -vE "output mean|config"
  done
done | tee "$OUT/phases.txt"
