#!/usr/bin/env bash
# Each batch group's end of steps and the multiprocessors its blocks shared (lab.cu's marks), 30
# steps, at the library's plans of [*, 128, 128] (16 groups of 8 samples, one cluster a group,
# pushed; LSTM forward with its input folded in and backward, GRU forward) with 16 units a block
# (the rule's: 8 blocks), 20 (7 blocks) and 24 (6); of [*, 32, 128] in 8 groups of 4 with 8 (16
# blocks), 12 (11) and 16 (8); and of LSTM [*, 32, 512]'s forward (4 groups of 8 samples, 16
# blocks of 32 units).
#   groups.sh build DIR   builds the harnesses (nvcc, here)
#   groups.sh run DIR     runs each twice
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$2
names="fwd128u16 fwd128u20 fwd128u24 bwd128u16 bwd128u20 bwd128u24 gfwd128u16 gfwd128u20 gfwd128u24
  fwd32x128u8 fwd32x128u12 fwd32x128u16 bwd32x128u8 bwd32x128u12 bwd32x128u16 fwd512u32"
case $1 in
build)
  mkdir -p "$dir"
  b() { bash "$here/../../scripts/persistent-lab/build.sh" "$dir" "$@" -DCL=1 -DLAB_T=30 -DLAB_MARKS; }
  for u in 16 20 24; do
    b fwd128u$u -DHID=128 -DBATCH=8 -DGROUPS=16 -DUNITS=$u -DONE_CLUSTER=1 -DPUSH=1 -DXIN=128
    b bwd128u$u -DHID=128 -DBATCH=8 -DGROUPS=16 -DUNITS=$u -DNBUF=8 -DONE_CLUSTER=1 -DPUSH=1 -DLAB_BWD
    b gfwd128u$u -DHID=128 -DBATCH=8 -DGROUPS=16 -DUNITS=$u -DONE_CLUSTER=1 -DPUSH=1 -DXIN=128 -DLAB_GRU
  done
  for u in 8 12 16; do
    b fwd32x128u$u -DHID=128 -DBATCH=4 -DGROUPS=8 -DUNITS=$u -DONE_CLUSTER=1 -DPUSH=1 -DXIN=128
    b bwd32x128u$u -DHID=128 -DBATCH=4 -DGROUPS=8 -DUNITS=$u -DNBUF=8 -DONE_CLUSTER=1 -DPUSH=1 -DLAB_BWD
  done
  b fwd512u32 -DHID=512 -DBATCH=8 -DGROUPS=4 -DUNITS=32 -DONE_CLUSTER=1 -DPUSH=1
  ;;
run)
  for name in $names; do
    for round in 1 2; do
      echo "== $name"
      timeout 30 "$dir/lab-$name" 30 2>&1 | grep -vE 'output mean'
    done
  done
  ;;
esac
