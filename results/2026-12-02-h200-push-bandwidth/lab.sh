#!/usr/bin/env bash
# The lab builds of this folder (nvcc here, ../shared/tools/cuda-build-env.sh), from the repository
# root, each into a folder of its own; on the GPU: `scripts/persistent-lab/variants.sh run DIR 30`
# for each, and .lab-p/push_probe as logs/push-probe.log says.
#   results/2026-12-02-h200-push-bandwidth/lab.sh
# The patches (reg-gates-512, senders, bulk-push, push-quads) were applied to main at ee4fd16
# (`git apply`) for their builds only; none is in the library. The §8-11 builds were made on
# 3efa039; reg-gates-push16.patch's kernel change went into the library after it (a56b025, the
# 16-byte form the default there), so the script runs as it stands on a tree before that.
set -euo pipefail
R=results/2026-12-02-h200-push-bandwidth
eval "$(bash ../shared/tools/cuda-build-env.sh)"
v=scripts/persistent-lab/variants.sh
shape="-DHID=512 -DBATCH=8 -DUNITS=32 -DONE_CLUSTER=1 -DGROUPS=4"
# §1: the library's forward and backward at hidden 512 (logs/lab-phases-512.log, lab-warps.log).
bash $v build .lab-h512 "$shape -DNBUF=2" fwd:-DPUSH=1 fwd-w16:"-DPUSH=1 -DNWARPS=16" bwd:-DLAB_BWD \
  bwd-push:"-DLAB_BWD -DPUSH=1"
bash $v build .lab-w "$shape -DNBUF=2 -DPUSH=1" fwd: fwd-w3:-DLAB_PHASE_THREAD=96 \
  fwd-w7:-DLAB_PHASE_THREAD=224 fwd-w7b:-DLAB_PHASE_THREAD=255 fwd-infer:-DLAB_INFER
# §2: the probe (logs/push-probe.log).
mkdir -p .lab-p && nvcc -O3 -std=c++17 -arch=sm_90a scripts/persistent-lab/push_probe.cu -o .lab-p/push_probe
# §3: fewer senders (senders.patch; logs/lab-senders.log).
git apply $R/senders.patch
bash $v build .lab-s "$shape -DNBUF=2 -DPUSH=1" fwd: fwd-s2:-DLAB_SENDERS=2 fwd-s4:-DLAB_SENDERS=4 \
  fwd-s16:-DLAB_SENDERS=16
git apply -R $R/senders.patch
# §4: gates in registers at hidden 512 (reg-gates-512.patch; logs/lab-reg-gates-512.log).
git apply $R/reg-gates-512.patch
bash $v build .lab-rg "$shape -DNBUF=2 -DPUSH=1" fwd: fwd-rg1:"-DREG_GATES=1 -DNWARPS=9 -DRG_HELPERS=1" \
  fwd-rg2:"-DREG_GATES=1 -DNWARPS=10 -DRG_HELPERS=2" fwd-rg4:"-DREG_GATES=1 -DNWARPS=12 -DRG_HELPERS=4"
git apply -R $R/reg-gates-512.patch
# §5: the pushed backward by bulk copies and in 16-byte stores (bulk-push.patch, push-quads.patch;
# logs/lab-bulk-backward.log, lab-quads.log, sanitize-quads.log).
git apply $R/bulk-push.patch
bash $v build .lab-b "$shape -DNBUF=8 -DLAB_BWD" bwd: bwd-push:-DPUSH=1 bwd-bulk:"-DPUSH=1 -DPUSH_BULK=1"
for hu in 384:24 256:16; do
  bash $v build .lab-b${hu%:*} "-DHID=${hu%:*} -DBATCH=8 -DUNITS=${hu#*:} -DNBUF=8 -DONE_CLUSTER=1 -DGROUPS=4 -DLAB_BWD" \
    bwd: bwd-push:-DPUSH=1 bwd-bulk:"-DPUSH=1 -DPUSH_BULK=1"
done
git apply -R $R/bulk-push.patch
git apply $R/push-quads.patch
for hu in 512:32 384:24 256:16 128:8; do
  d=.lab-q${hu%:*}; [ "${hu%:*}" = 512 ] && d=.lab-q  # (the logs' name)
  bash $v build $d "-DHID=${hu%:*} -DBATCH=8 -DUNITS=${hu#*:} -DNBUF=8 -DONE_CLUSTER=1 -DGROUPS=4 -DLAB_BWD" \
    bwd: bwd-pairs:"-DPUSH=1 -DPUSH_QUADS=0" bwd-quads:-DPUSH=1
done
git apply -R $R/push-quads.patch
# §7: wgmma with N = 8 (wgmma-n8.patch: §4's patch and RG_WGMMA, lab.cu's include of wgmma.cuh,
# build.sh's -gencode; logs/lab-wgmma-n8.log).
git apply $R/wgmma-n8.patch
wg="-DREG_GATES=1 -DRG_WGMMA=1"
bash $v build .lab-wg "$shape -DNBUF=2 -DPUSH=1" fwd: fwd-wg1:"$wg -DNWARPS=10 -DRG_HELPERS=2 -DRG_WG_CHAINS=1" \
  fwd-wg2:"$wg -DNWARPS=10 -DRG_HELPERS=2 -DRG_WG_CHAINS=2" fwd-wg2h4:"$wg -DNWARPS=12 -DRG_HELPERS=4 -DRG_WG_CHAINS=2" \
  fwd-wg2i:"$wg -DNWARPS=10 -DRG_HELPERS=2 -DRG_WG_CHAINS=2 -DLAB_INFER"
for h in 256 128; do
  bash $v build .lab-wg$h "-DHID=$h -DBATCH=8 -DUNITS=16 -DNBUF=2 -DONE_CLUSTER=1 -DGROUPS=4 -DPUSH=1" fwd: \
    fwd-rg:"-DREG_GATES=1 -DNWARPS=8" fwd-wg:"$wg -DNWARPS=8 -DRG_WG_CHAINS=2" fwd-wg1:"$wg -DNWARPS=8 -DRG_WG_CHAINS=1"
done
git apply -R $R/wgmma-n8.patch
# §8 (built, not run): the register-gates forward's 16-byte pushes (reg-gates-push16.patch).
git apply $R/reg-gates-push16.patch
for cfg in 128:16:4:8 128:24:16:12 256:16:4:8 64:8:4:4; do
  IFS=: read -r H U G W <<< "$cfg"
  bash $v build .lab-p16-$H-$G "-DHID=$H -DBATCH=8 -DUNITS=$U -DNBUF=2 -DONE_CLUSTER=1 -DGROUPS=$G -DPUSH=1 -DREG_GATES=1 -DNWARPS=$W" \
    fwd: fwd-16:-DRG_PUSH16=1
done
git apply -R $R/reg-gates-push16.patch
# §9 (built, not run): the backward's gate gradients by multicast into one stage, a mbarrier a warp
# (backward-multicast.patch, -DBMCAST=1), against the library's L2 streaming (8 chunk buffers a warp).
git apply $R/backward-multicast.patch
for hu in 512:32 384:24 256:16; do
  bash $v build .lab-bm${hu%:*} "-DHID=${hu%:*} -DBATCH=8 -DUNITS=${hu#*:} -DNBUF=8 -DONE_CLUSTER=1 -DGROUPS=4 -DLAB_BWD" \
    bwd: bwd-bm:-DBMCAST=1
done
git apply -R $R/backward-multicast.patch
# §10 (built, not run): the forward's pushed stage with an mbarrier a K group's columns, each warp
# multiplying as soon as its columns have landed, senders starting at their own rank
# (slice-barriers.patch, -DSLICE_BARS=1).
git apply $R/slice-barriers.patch
for hu in 512:32 384:24 256:16; do
  bash $v build .lab-sl${hu%:*} "-DHID=${hu%:*} -DBATCH=8 -DUNITS=${hu#*:} -DNBUF=2 -DONE_CLUSTER=1 -DGROUPS=4 -DPUSH=1" \
    fwd: fwd-sl:-DSLICE_BARS=1 fwd-i:-DLAB_INFER fwd-isl:"-DLAB_INFER -DSLICE_BARS=1"
done
git apply -R $R/slice-barriers.patch
# §11 (built, not run): the pushed backward with its W_hh tile in registers (-DPUSH_WREG=1, the
# library's kernel as it is: 216 registers at hidden 512, no spills), against the L2 exchange.
for hu in 512:32 384:24; do
  bash $v build .lab-wr${hu%:*} "-DHID=${hu%:*} -DBATCH=8 -DUNITS=${hu#*:} -DNBUF=8 -DONE_CLUSTER=1 -DGROUPS=4 -DLAB_BWD" \
    bwd: bwd-push:-DPUSH=1 bwd-push-wreg:"-DPUSH=1 -DPUSH_WREG=1"
done
