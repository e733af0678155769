#!/usr/bin/env bash
# The weight tiles' fill by asynchronous copies (this tree) against the fill in rounds of FILL
# loads (fill.diff reversed), in the lab harness, the one-cluster pushed forward with its input
# folded in at [30, 32, 128]'s groups (hidden 128, 16 units a block, 4 samples a group; 1 and 8
# groups), LSTM and GRU: µs a launch, then the prologue by phase clocks (one group).
# Old, new, old, new. `lab-fill.sh OUT`. As run, on the tree of the build "fill*" (README.md):
# 6203b63 with fill.diff and 98f676e's common.cuh; fill.diff does not reverse on later trees.
set -uo pipefail
top=$1
here=$(cd "$(dirname "$0")" && pwd)
old=$top/old-tree
bash "$here/../../scripts/persistent-lab/tree.sh" "$old" "$here/fill.diff" -R -p1 || exit 1
c="-DHID=128 -DBATCH=4 -DUNITS=16 -DNWARPS=8 -DXIN=128"
configs=("fx1-h128-b4 $c" "gx1-h128-b4 $c -DLAB_GRU" "fx8-h128-b4 $c -DGROUPS=8" "gx8-h128-b4 $c -DGROUPS=8 -DLAB_GRU"
         "fx8-h128-b4-again $c -DGROUPS=8" "gx8-h128-b4-again $c -DGROUPS=8 -DLAB_GRU"
         "fxP-h128-b4 $c -DLAB_PHASES" "gxP-h128-b4 $c -DLAB_GRU -DLAB_PHASES")
for round in old new old2 new2; do
  echo "== $round"
  out=$top/$round
  case $round in old*) tree=$old ;; *) tree=$(cd "$here/../.." && pwd) ;; esac
  source "$here/../2026-11-29-h200-one-block/lab-run.sh" | cut -c1-200
  grep -h prologue "$out"/*P*.txt
  rm -f "$out"/*.txt
done
rm -rf "$old"
