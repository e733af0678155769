#!/usr/bin/env bash
# (Branch lab/next: harnesses prepared for the next GPU session, not yet run.)
# 1. [*, 128, 128]'s batch groups: 16 groups of 8 samples in clusters of 8 blocks leave two
#    clusters sharing multiprocessors (results/2026-11-30-h200-launch-marks/ §3). Alternatives
#    that keep 8 blocks of 16 units a cluster: 13 groups of 10 samples (130 rows: 13 clusters,
#    each alone if the GPU places 14), 14 of 10, 8 of 16, and the rule's with 4 warps a block.
#    LSTM forward (input folded in), LSTM backward, GRU forward; 30 steps.
# 2. The backward's fill from W_hh transposed (-DLAB_FILL_ROWS: whole rows by cp.async, the
#    forward's way) at LSTM [*, 32, 512]'s and [*, 32, 1024]'s backward plans, against the
#    library's fill.
#   next.sh build DIR | next.sh run DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$2
b() { bash "$here/build.sh" "$dir" "$@" -DCL=1 -DLAB_T=30 -DLAB_MARKS; }
groups="g16b8 g13b10 g14b10 g8b16 g16b8w4"
case $1 in
build)
  mkdir -p "$dir"
  for g in $groups; do
    case $g in
      g16b8) d="-DGROUPS=16 -DBATCH=8" ;;
      g13b10) d="-DGROUPS=13 -DBATCH=10" ;;
      g14b10) d="-DGROUPS=14 -DBATCH=10" ;;
      g8b16) d="-DGROUPS=8 -DBATCH=16" ;;
      g16b8w4) d="-DGROUPS=16 -DBATCH=8 -DNWARPS=4" ;;
    esac
    # shellcheck disable=SC2086
    {
      b fwd-$g -DHID=128 -DUNITS=16 -DONE_CLUSTER=1 -DPUSH=1 -DXIN=128 $d
      b bwd-$g -DHID=128 -DUNITS=16 -DNBUF=8 -DONE_CLUSTER=1 -DPUSH=1 -DLAB_BWD $d
      b gfwd-$g -DHID=128 -DUNITS=16 -DONE_CLUSTER=1 -DPUSH=1 -DXIN=128 -DLAB_GRU $d
    }
  done
  for f in "" -DLAB_FILL_ROWS; do
    t=${f:+-rows}
    b bwd512$t -DHID=512 -DBATCH=8 -DGROUPS=4 -DUNITS=32 -DNBUF=8 -DONE_CLUSTER=1 -DLAB_BWD $f
    b bwd1024$t -DHID=1024 -DBATCH=16 -DGROUPS=2 -DUNITS=16 -DNBUF=5 -DLAB_BWD $f
  done
  ls "$dir"/lab-* | wc -l | xargs echo "built:"
  ;;
run)
  for name in $(for g in $groups; do echo fwd-$g bwd-$g gfwd-$g; done) bwd512 bwd512-rows bwd1024 bwd1024-rows; do
    for round in 1 2; do
      echo "== $name"
      timeout 30 "$dir/lab-$name" 30 2>&1 | grep -vE 'output mean'
    done
  done
  ;;
esac
