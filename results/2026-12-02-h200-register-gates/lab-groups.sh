#!/usr/bin/env bash
# Batch 128 at hidden 128 in fewer, larger batch groups whose clusters of 8 blocks each get
# multiprocessors of their own (14 of 16 did, ../2026-11-30-h200-launch-marks/ §3): the
# harness (scripts/persistent-lab/lab.cu, 30 steps, -DLAB_MARKS) at the library's plan (16
# groups of 8 samples, one cluster of 8 blocks of 16 units a group, pushed both ways, the
# LSTM forward's input folded in) against 13 groups of 10 (130 rows: the batch's last group
# would hold 8), 14 of 10 and 15 of 9; LSTM forward and backward, GRU forward; the phases
# (-DLAB_PHASES) of the LSTM forward at 16 of 8 and 13 of 10; and 16 of 8 with 4 warps a block
# instead of 8 (w4: two blocks on one multiprocessor might share it more evenly).
#   lab.sh build DIR   builds the harnesses (nvcc, here)
#   lab.sh run DIR     runs each twice, in turn
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$2
shapes="16x8 13x10 14x10 15x9"
case $1 in
build)
  mkdir -p "$dir"
  b() { bash "$here/../../scripts/persistent-lab/build.sh" "$dir" "$@" -DCL=1 -DLAB_T=30 -DHID=128 -DUNITS=16 \
          -DONE_CLUSTER=1 -DPUSH=1 > "$dir/build-$1.log" 2>&1 || echo "build $1 failed: $(tail -3 "$dir/build-$1.log")"; }
  for s in $shapes; do
    g=${s%x*} n=${s#*x}
    b fwd$s -DBATCH=$n -DGROUPS=$g -DXIN=128 -DLAB_MARKS &
    b bwd$s -DBATCH=$n -DGROUPS=$g -DNBUF=8 -DLAB_BWD -DLAB_MARKS &
    wait
    b gfwd$s -DBATCH=$n -DGROUPS=$g -DXIN=128 -DLAB_GRU -DLAB_MARKS &
    [ "$s" = 16x8 ] || [ "$s" = 13x10 ] && b fwdph$s -DBATCH=$n -DGROUPS=$g -DXIN=128 -DLAB_PHASES &
    wait
  done
  b fwd16x8w4 -DBATCH=8 -DGROUPS=16 -DXIN=128 -DNWARPS=4 -DLAB_MARKS &
  b bwd16x8w4 -DBATCH=8 -DGROUPS=16 -DNBUF=8 -DNWARPS=4 -DLAB_BWD -DLAB_MARKS &
  wait
  ls "$dir"/lab-* | wc -l | xargs echo "harnesses built:"
  ;;
run)
  for round in 1 2; do
    for kind in fwd bwd gfwd; do
      for s in $shapes $([ $kind = gfwd ] || echo 16x8w4); do
        echo "== $kind$s ($round)"
        timeout 30 "$dir/lab-$kind$s" 30 2>&1 | grep -vE 'output mean'
      done
    done
  done
  for s in 16x8 13x10; do
    echo "== fwdph$s"
    timeout 30 "$dir/lab-fwdph$s" 10 2>&1 | grep -vE 'output mean|config'
  done
  ;;
esac
