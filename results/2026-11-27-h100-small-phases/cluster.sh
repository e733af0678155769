#!/usr/bin/env bash
# On the GPU machine (its nvcc builds scripts/persistent-lab's harness): run.sh's per-phase SM
# clocks for layers in one thread-block cluster (-DONE_CLUSTER=1: the cluster's hardware barrier
# in place of the grid barrier through L2), each pass with and without PUSH (what a step
# exchanges pushed into every block's shared memory with st.async, no barrier between steps; the
# backward's PUSH is bwd-push.diff, applied to recurrence_bwd.cu for that run only): hidden 128
# at batch 4 (a batch group of the rule's 8 at batch 32) in 8 blocks of 16 units (the library's
# one-cluster plans) and in 16 of 8 (the non-portable size), batch 32 in 8 blocks, and hidden 256
# at batch 8 in 8 blocks of 32 units; each also on the grid barrier. Phases 5 and 6 of the
# forward (6 and 7 of the backward) mark the barrier's arrival and the start of its wait.
#   results/2026-11-27-h100-small-phases/cluster.sh OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
OUT=$1
mkdir -p "$OUT"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
lab=/tmp/lab-cluster
mkdir -p $lab
shapes=("h128b4u16:-DHID=128 -DBATCH=4 -DUNITS=16" "h128b4u8:-DHID=128 -DBATCH=4 -DUNITS=8"
  "h128b32u16:-DHID=128 -DBATCH=32 -DUNITS=16" "h256b8u32:-DHID=256 -DBATCH=8 -DUNITS=32")
# The cluster's barrier (-DONE_CLUSTER=1), then the grid barrier for the same blocks.
passes=("fwd:-DONE_CLUSTER=1" "fwd-push:-DONE_CLUSTER=1 -DPUSH=1" "bwd:-DONE_CLUSTER=1 -DLAB_BWD"
  "bwd-push:-DONE_CLUSTER=1 -DPUSH=1 -DLAB_BWD" "grid-fwd:" "grid-bwd:-DLAB_BWD")
for s in "${shapes[@]}"; do
  IFS=: read -r name defs <<< "$s"
  for pass in "${passes[@]}"; do
    IFS=: read -r p pdefs <<< "$pass"
    for ph in "" "-DLAB_PHASES"; do
      tag=$name-$p${ph:+-ph}
      # shellcheck disable=SC2086
      PATH=$(dirname "$nvcc"):$PATH bash scripts/persistent-lab/build.sh $lab "$tag" $defs -DNBUF=2 $pdefs $ph \
        > $lab/build-$tag.log 2>&1 || echo "build $tag failed: $(tail -3 $lab/build-$tag.log)"
    done &
  done
done
wait
for s in "${shapes[@]}"; do
  name=${s%%:*}
  for pass in "${passes[@]}"; do
    p=${pass%%:*}
    [ -x $lab/lab-$name-$p ] || continue
    # A pushed pass's output against the same pass's through L2 (the same sums: no difference
    # expected).
    files="$lab/out-$name-$p"; [ ${p%-push} != $p ] && files="$files $lab/out-$name-${p%-push}"
    echo "== $name $p: $(timeout 10 $lab/lab-$name-$p 30 $files 2>&1 | grep -vE "output mean" | tr '\n' ' ')"
    timeout 10 $lab/lab-$name-$p-ph 10 2>&1 | grep -vE "output mean|config"
  done
done | tee "$OUT/cluster-phases.txt"
