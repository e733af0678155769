#!/usr/bin/env bash
# The lab builds of this folder (nvcc here, ../shared/tools/cuda-build-env.sh), from the repository
# root, each into a folder of its own, packed for the GPU into .lab-pack/ (run.sh, run-wr.sh and
# run-w.sh unpack and run them: scripts/persistent-lab/variants.sh run DIR 30).
#   results/2026-12-02-h200-wide-backward/lab.sh [b128|wr|w]...
# b128 (on main at 5260233): the backward through L2 at [*, 128, 3 x 512]'s plan (8 groups of 16
#   samples, 32 units a block) as the library runs it, in clusters of 2, in chunks of 32, in 16
#   warps, and in 4 groups of 32 (which needs more shared memory than a block has).
# wr and w (with recurrence_bwd.cu's BWD_WREG, the fragments of the tile in registers): 8 and 16
#   warps, the fragments in registers or not, at that plan (wr), at [*, 32, 1024]'s (2 groups of
#   16, 16 units a block) and at [*, 32, 512]'s (4 groups of 8, one cluster of 16 blocks) (w).
set -euo pipefail
eval "$(bash ../shared/tools/cuda-build-env.sh)"
v=scripts/persistent-lab/variants.sh
mkdir -p .lab-pack
parts=${*:-b128 wr w}
for part in $parts; do
  case $part in
    b128)
      bash $v build .lab-b128 "-DHID=512 -DBATCH=16 -DGROUPS=8 -DUNITS=32 -DLAB_BWD -DCH=64 -DLAB_T=30" \
        bwd:-DNBUF=5 bwd-cl2:"-DNBUF=5 -DCL=2" bwd-ch32:"-DNBUF=5 -DCH=32" bwd-w16:"-DNBUF=3 -DNWARPS=16" \
        bwd-g4:"-DNBUF=5 -DBATCH=32 -DGROUPS=4"
      tar -cJf .lab-pack/b128.txz .lab-b128/lab-* .lab-b128/order
      ;;
    wr)
      bash $v build .lab-wr "-DHID=512 -DBATCH=16 -DGROUPS=8 -DUNITS=32 -DLAB_BWD -DCH=64 -DLAB_T=30 -Xptxas=-v" \
        bwd:-DNBUF=5 bwd-wr:"-DNBUF=5 -DBWD_WREG=1" bwd-w16:"-DNBUF=3 -DNWARPS=16" \
        bwd-w16-wr:"-DNBUF=3 -DNWARPS=16 -DBWD_WREG=1"
      tar -cJf .lab-pack/wr.txz .lab-wr/lab-* .lab-wr/order
      ;;
    w)
      bash $v build .lab-w1024 "-DHID=1024 -DBATCH=16 -DGROUPS=2 -DUNITS=16 -DLAB_BWD -DCH=64 -DLAB_T=30 -Xptxas=-v" \
        bwd:-DNBUF=5 bwd-wr:"-DNBUF=5 -DBWD_WREG=1" bwd-w16:"-DNBUF=3 -DNWARPS=16" \
        bwd-w16-wr:"-DNBUF=3 -DNWARPS=16 -DBWD_WREG=1"
      bash $v build .lab-w512 "-DHID=512 -DBATCH=8 -DGROUPS=4 -DUNITS=32 -DONE_CLUSTER=1 -DLAB_BWD -DCH=64 -DLAB_T=30 -Xptxas=-v" \
        bwd:-DNBUF=8 bwd-wr:"-DNBUF=8 -DBWD_WREG=1" bwd-w16:"-DNBUF=4 -DNWARPS=16" \
        bwd-w16-wr:"-DNBUF=4 -DNWARPS=16 -DBWD_WREG=1"
      tar -cJf .lab-pack/w.txz .lab-w1024/lab-* .lab-w1024/order .lab-w512/lab-* .lab-w512/order
      ;;
  esac
done
