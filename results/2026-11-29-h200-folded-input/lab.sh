#!/usr/bin/env bash
# Where the pushed forward's output stores and next-input loads go in a step, in the lab harness,
# on a copy of the tree with this folder's knobs.diff (lab-only switches: -DFWD_OUT_SYNC=1 the
# step's closing __syncthreads before the outputs, so that every warp's push goes out before any
# store; -DFWD_X_EARLY=1 the next step's input projection loaded at the step's start instead of
# its end; -DFWD_OUT_DEFER=1 a step's outputs stored in the next step, after its products;
# -DLAB_INFER no saved activations, as inference). knobs.diff applies to c1d47c6, where this
# ran: `lab.sh OUT` from a checkout of that commit.
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
tree=$out/tree
bash "$here/../../scripts/persistent-lab/tree.sh" "$tree" "$here/knobs.diff" || exit 1
configs=()
for hb in 128:4 128:16 256:8; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  for mode in f i; do
    c="-DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8"
    [ $mode = i ] && c="$c -DLAB_INFER"
    configs+=("$mode-h$h-b$b $c" "$mode-h$h-b$b-sync $c -DFWD_OUT_SYNC=1"
              "$mode-h$h-b$b-xearly $c -DFWD_X_EARLY=1" "$mode-h$h-b$b-defer $c -DFWD_OUT_DEFER=1"
              "$mode-h$h-b$b-sync-xearly $c -DFWD_OUT_SYNC=1 -DFWD_X_EARLY=1"
              "$mode-h$h-b$b-defer-xearly $c -DFWD_OUT_DEFER=1 -DFWD_X_EARLY=1"
              "$mode-h$h-b$b-again $c"
              "${mode}P-h$h-b$b $c -DLAB_PHASES"
              "${mode}P-h$h-b$b-sync-xearly $c -DLAB_PHASES -DFWD_OUT_SYNC=1 -DFWD_X_EARLY=1"
              "${mode}P-h$h-b$b-defer-xearly $c -DLAB_PHASES -DFWD_OUT_DEFER=1 -DFWD_X_EARLY=1")
  done
done
source "$here/../2026-11-29-h200-one-block/lab-run.sh"
rm -rf "$tree"
