#!/usr/bin/env bash
# The forward's harness (scripts/persistent-lab/lab.cu, 30 steps, -DLAB_MARKS: each batch
# group's end of steps and whether its blocks shared multiprocessors; with the phases of every
# step, -DLAB_PHASES, in a second build of each) at the library's pushed one-cluster plans,
# recurrence_fwd.cu's kernel against recurrence_reg_fwd.cu's (-DREG_GATES=1, "-r"), LSTM and
# GRU, the input folded in unless it says otherwise:
#   b128: hidden 128, batch 128 in 16 groups of 8, 16 units a block (8 blocks); and the register
#         kernel in 8 groups of 16 (two tiles of 8 samples, "-r8x16");
#   b32:  hidden 128, batch 32 in 4 groups of 8, 8 units a block (16 blocks); and 2 groups of 16;
#   h256: hidden 256, batch 32 in 4 groups of 8, 16 units a block (16 blocks);
#   h64:  hidden 64, batch 32 in 4 groups of 8, 8 units a block (8 blocks), and 4 units (16);
#   b4:   hidden 128, batch 4 in one group, 8 units a block (16 blocks).
#   lab.sh build DIR   builds the harnesses (nvcc, here)
#   lab.sh run DIR     runs each variant of each shape, twice
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
V=$here/../../scripts/persistent-lab/variants.sh
dir=$2
case $1 in
build)
  C="-DONE_CLUSTER=1 -DPUSH=1 -DCL=1 -DLAB_T=30 -DLAB_MARKS" R=-DREG_GATES=1
  bash "$V" build "$dir/b128" "-DHID=128 $C -DXIN=128 -DUNITS=16" fwd:"-DBATCH=8 -DGROUPS=16" \
    fwd-r:"-DBATCH=8 -DGROUPS=16 $R" fwd-r8x16:"-DBATCH=16 -DGROUPS=8 $R" gru:"-DBATCH=8 -DGROUPS=16 -DLAB_GRU" \
    gru-r:"-DBATCH=8 -DGROUPS=16 -DLAB_GRU $R" gru-r8x16:"-DBATCH=16 -DGROUPS=8 -DLAB_GRU $R"
  bash "$V" build "$dir/b32" "-DHID=128 $C -DXIN=128 -DUNITS=8" fwd:"-DBATCH=8 -DGROUPS=4" \
    fwd-r:"-DBATCH=8 -DGROUPS=4 $R" fwd-r2x16:"-DBATCH=16 -DGROUPS=2 $R" gru:"-DBATCH=8 -DGROUPS=4 -DLAB_GRU" \
    gru-r:"-DBATCH=8 -DGROUPS=4 -DLAB_GRU $R" gru-r2x16:"-DBATCH=16 -DGROUPS=2 -DLAB_GRU $R"
  bash "$V" build "$dir/h256" "-DHID=256 $C -DXIN=256 -DUNITS=16 -DBATCH=8 -DGROUPS=4" fwd: fwd-r:$R \
    gru:-DLAB_GRU gru-r:"-DLAB_GRU $R"
  bash "$V" build "$dir/h64" "-DHID=64 $C -DXIN=64 -DBATCH=8 -DGROUPS=4" fwd:-DUNITS=8 fwd-r:"-DUNITS=8 $R" \
    fwd-r4:"-DUNITS=4 $R"
  bash "$V" build "$dir/b4" "-DHID=128 $C -DXIN=128 -DBATCH=4 -DGROUPS=1 -DUNITS=8" fwd: fwd-r:$R \
    gru:-DLAB_GRU gru-r:"-DLAB_GRU $R"
  ;;
run)
  for round in 1 2; do
    for d in b128 b32 h256 h64 b4; do
      echo "#### $d ($round)"
      bash "$V" run "$dir/$d" 30
    done
  done
  ;;
esac
