#!/usr/bin/env bash
# The forward with its gates in registers (recurrence_reg_fwd.cu, -DREG_GATES=1) in the lab's
# harness (scripts/persistent-lab/lab.cu, 30 steps, -DLAB_MARKS: each batch group's end of steps
# and whether its blocks shared multiprocessors; the phases, -DLAB_PHASES, in a second build of
# each), pushed, one cluster a batch group of 8 samples, the input folded in, at several units a
# block (a gate warp and a helper for each 4 units):
#   cl:       hidden 128, batch 128 (16 groups): LSTM at 16 units (clusters of 8 blocks, the plan
#             before), 20 (7), 24 (6) and 32 (4); GRU at 16, 20 and 24;
#   cl/b32:   hidden 128, batch 32 (4 groups): LSTM at 8 (16 blocks, the plan), 16 and 32 units;
#   cl/h256:  hidden 256, batch 32 (4 groups): LSTM at 16 (16 blocks, the plan) and 32 units.
#   lab.sh build DIR   builds the harnesses (nvcc, here)
#   lab.sh run DIR     runs each variant of each shape, twice
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
V=$here/../../scripts/persistent-lab/variants.sh
dir=$2
case $1 in
build)
  C="-DONE_CLUSTER=1 -DPUSH=1 -DCL=1 -DLAB_T=30 -DLAB_MARKS -DREG_GATES=1 -DBATCH=8"
  bash "$V" build "$dir/cl" "$C -DHID=128 -DXIN=128 -DGROUPS=16" lstm-u16:"-DUNITS=16 -DNWARPS=8" \
    lstm-u20:"-DUNITS=20 -DNWARPS=10" lstm-u24:"-DUNITS=24 -DNWARPS=12" lstm-u32:"-DUNITS=32 -DNWARPS=16" \
    gru-u16:"-DUNITS=16 -DNWARPS=8 -DLAB_GRU" gru-u20:"-DUNITS=20 -DNWARPS=10 -DLAB_GRU" \
    gru-u24:"-DUNITS=24 -DNWARPS=12 -DLAB_GRU"
  bash "$V" build "$dir/cl/b32" "$C -DHID=128 -DXIN=128 -DGROUPS=4" lstm-u8:"-DUNITS=8 -DNWARPS=4" \
    lstm-u16:"-DUNITS=16 -DNWARPS=8" lstm-u32:"-DUNITS=32 -DNWARPS=16"
  bash "$V" build "$dir/cl/h256" "$C -DHID=256 -DXIN=256 -DGROUPS=4" lstm-u16:"-DUNITS=16 -DNWARPS=8" \
    lstm-u32:"-DUNITS=32 -DNWARPS=16"
  ;;
run)
  for round in 1 2; do
    for d in "$dir/cl" "$dir/cl/b32" "$dir/cl/h256"; do
      echo "#### $d ($round)"
      bash "$V" run "$d" 30
    done
  done
  ;;
esac
