#!/usr/bin/env bash
# The one-cluster pushed forward with its input folded in (hidden 128, 4 samples a group, 16
# units a block: [30, 32, 128]'s groups), LSTM and GRU (-DLAB_GRU), in the lab harness: µs a
# launch at 35 and 200 steps (the call's fixed cost against its steps'), and with phase clocks
# the step's phases and the prologue (each block's start to its first step); then a GRU [30, 32,
# 1024] group's forward (16 samples, 16 units a block, the grid barrier, multicast in clusters
# of 8), its prologue. `lab.sh OUT`. As run, on the tree of the build "fill*" (README.md).
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
c="-DHID=128 -DBATCH=4 -DUNITS=16 -DNWARPS=8 -DXIN=128"
w="-DHID=1024 -DBATCH=16 -DUNITS=16 -DNWARPS=8 -DONE_CLUSTER=0 -DMCAST=8 -DLAB_GRU"
configs=("fx-h128-b4 $c" "fxP-h128-b4 $c -DLAB_PHASES" "fxT-h128-b4 $c -DLAB_T=200"
         "gx-h128-b4 $c -DLAB_GRU" "gxP-h128-b4 $c -DLAB_GRU -DLAB_PHASES" "gxT-h128-b4 $c -DLAB_GRU -DLAB_T=200"
         "fx-h128-b4-again $c" "gx-h128-b4-again $c -DLAB_GRU"
         "g-h1024-b16 $w" "gP-h1024-b16 $w -DLAB_PHASES")
source "$here/../2026-11-29-h200-one-block/lab-run.sh"
